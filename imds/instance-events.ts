// What happens to an instance over time, as the metadata service shows it: spot interruption notices,
// rebalance recommendations, scheduled maintenance events (with their codes, states and windows) and the
// Auto Scaling target lifecycle state. A trigger (from the config or from the management endpoint) says what
// happens and after how long; `parseTrigger` validates one as data, and `createInstanceEvents` holds the
// resulting state of one instance. Formats follow the real service:
//   spot/instance-action                    {"action": "terminate", "time": "2026-01-01T00:02:00Z"}
//   spot/termination-time                   2026-01-01T00:02:00Z            (terminate only)
//   events/recommendations/rebalance        {"noticeTime": "2026-01-01T00:00:00Z"}
//   events/maintenance/scheduled|history    [{"NotBefore": "8 Jan 2026 00:00:00 GMT", "Code": ..., "State": ...}]
//   autoscaling/target-lifecycle-state      InService | Terminated | Warmed:Stopped | ...
import { randomBytes } from 'node:crypto';
import { formatIsoSeconds, type Clock } from './clock.js';
import type { Scheduler } from './scheduler.js';

/** What a spot interruption does to the instance (`spot/instance-action` `action`). */
export const SpotAction = { Terminate: 'terminate', Stop: 'stop', Hibernate: 'hibernate' } as const;
export type SpotAction = (typeof SpotAction)[keyof typeof SpotAction];

/** Codes of scheduled maintenance events. */
export const EventCode = {
  InstanceReboot: 'instance-reboot',
  SystemReboot: 'system-reboot',
  SystemMaintenance: 'system-maintenance',
  InstanceRetirement: 'instance-retirement',
  InstanceStop: 'instance-stop',
} as const;
export type EventCode = (typeof EventCode)[keyof typeof EventCode];

/** States of scheduled maintenance events: `active` ones are listed under scheduled, the others under history. */
export const EventState = { Active: 'active', Completed: 'completed', Canceled: 'canceled' } as const;
export type EventState = (typeof EventState)[keyof typeof EventState];

/** Target lifecycle states of an Auto Scaling instance. */
export const AUTOSCALING_TARGET_STATES = [
  'Detached',
  'InService',
  'Standby',
  'Terminated',
  'Warmed:Hibernated',
  'Warmed:Running',
  'Warmed:Stopped',
  'Warmed:Terminated',
] as const;

/** Kinds of trigger. */
export const TriggerType = {
  SpotInterruption: 'spot-interruption',
  RebalanceRecommendation: 'rebalance-recommendation',
  ScheduledEvent: 'scheduled-event',
  ScheduledEventState: 'scheduled-event-state',
  AutoscalingTargetLifecycleState: 'autoscaling-target-lifecycle-state',
} as const;
export type TriggerType = (typeof TriggerType)[keyof typeof TriggerType];

/** A validated trigger. Every one fires `afterSeconds` after it is registered (service start for the config). */
export type Trigger =
  | { type: 'spot-interruption'; afterSeconds: number; action: SpotAction; noticeSeconds: number }
  | { type: 'rebalance-recommendation'; afterSeconds: number }
  | {
      type: 'scheduled-event';
      afterSeconds: number;
      code: EventCode;
      description: string;
      eventId?: string;
      /** The window opens this long after the event fires... */
      notBeforeSeconds: number;
      /** ...and lasts this long (NotAfter); 0 leaves NotAfter out. */
      windowSeconds: number;
      /** When set, the latest the event can be rescheduled to (NotBeforeDeadline), after NotBefore. */
      deadlineSeconds?: number;
    }
  | { type: 'scheduled-event-state'; afterSeconds: number; eventId: string; state: EventState }
  | { type: 'autoscaling-target-lifecycle-state'; afterSeconds: number; state: string };

/** One problem in a trigger: the JSON pointer (relative to the trigger) and what is wrong. */
export interface TriggerError {
  pointer: string;
  message: string;
}

/** A scheduled maintenance event as served (field order as on the real service). */
export interface ScheduledEvent {
  NotBefore: string;
  Code: string;
  Description: string;
  EventId: string;
  NotAfter?: string;
  NotBeforeDeadline?: string;
  State: string;
}

const DEFAULT_DESCRIPTIONS: Record<EventCode, string> = {
  'instance-reboot': 'scheduled reboot',
  'system-reboot': 'scheduled reboot',
  'system-maintenance': 'scheduled maintenance',
  'instance-retirement': 'scheduled retirement',
  'instance-stop': 'scheduled stop',
};

const EVENT_ID = /^instance-event-[0-9a-f]{17}$/;
/** Bound on delays and offsets: 30 days. */
const MAX_SECONDS = 30 * 86400;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function oneOf<T extends string>(values: readonly T[], v: unknown): v is T {
  return typeof v === 'string' && (values as readonly string[]).includes(v);
}

/** Validates one trigger (config entry or management request body); every problem is reported. */
export function parseTrigger(
  input: unknown,
): { ok: true; trigger: Trigger } | { ok: false; errors: TriggerError[] } {
  if (!isRecord(input))
    return { ok: false, errors: [{ pointer: '', message: 'a trigger must be an object' }] };
  const errors: TriggerError[] = [];
  const allowed = new Set<string>(['type', 'afterSeconds']);
  const seconds = (key: string, fallback: number, min = 0): number => {
    allowed.add(key);
    const v = input[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > MAX_SECONDS) {
      errors.push({ pointer: `/${key}`, message: `${key} must be an integer from ${min} to ${MAX_SECONDS}` });
      return fallback;
    }
    return v;
  };
  const pick = <T extends string>(
    key: string,
    values: readonly T[],
    fallback: T | undefined,
  ): T | undefined => {
    allowed.add(key);
    const v = input[key];
    if (v === undefined) {
      if (fallback === undefined) errors.push({ pointer: `/${key}`, message: `${key} is required` });
      return fallback;
    }
    if (oneOf(values, v)) return v;
    errors.push({ pointer: `/${key}`, message: `${key} must be one of ${values.join(', ')}` });
    return fallback;
  };
  const type = input['type'];
  const afterSeconds = seconds('afterSeconds', 0);
  let trigger: Trigger | undefined;
  switch (type) {
    case TriggerType.SpotInterruption: {
      const action = pick('action', Object.values(SpotAction), SpotAction.Terminate) ?? SpotAction.Terminate;
      const noticeSeconds = seconds('noticeSeconds', 120);
      trigger = { type, afterSeconds, action, noticeSeconds };
      break;
    }
    case TriggerType.RebalanceRecommendation:
      trigger = { type, afterSeconds };
      break;
    case TriggerType.ScheduledEvent: {
      const code = pick('code', Object.values(EventCode), EventCode.SystemReboot) ?? EventCode.SystemReboot;
      allowed.add('description');
      const d = input['description'];
      if (d !== undefined && (typeof d !== 'string' || d.length === 0 || d.length > 255))
        errors.push({
          pointer: '/description',
          message: 'description must be a string of 1 to 255 characters',
        });
      allowed.add('eventId');
      const id = input['eventId'];
      if (id !== undefined && (typeof id !== 'string' || !EVENT_ID.test(id)))
        errors.push({
          pointer: '/eventId',
          message: 'eventId must be "instance-event-" followed by 17 hex digits',
        });
      const notBeforeSeconds = seconds('notBeforeSeconds', 7 * 86400);
      const windowSeconds = seconds('windowSeconds', 2 * 3600);
      const deadline = input['deadlineSeconds'] === undefined ? undefined : seconds('deadlineSeconds', 0, 1);
      allowed.add('deadlineSeconds');
      trigger = {
        type,
        afterSeconds,
        code,
        description: typeof d === 'string' && d.length > 0 ? d : DEFAULT_DESCRIPTIONS[code],
        notBeforeSeconds,
        windowSeconds,
        ...(typeof id === 'string' ? { eventId: id } : {}),
        ...(deadline === undefined ? {} : { deadlineSeconds: deadline }),
      };
      break;
    }
    case TriggerType.ScheduledEventState: {
      allowed.add('eventId');
      const id = input['eventId'];
      if (typeof id !== 'string' || !EVENT_ID.test(id))
        errors.push({
          pointer: '/eventId',
          message: 'eventId must be "instance-event-" followed by 17 hex digits',
        });
      const state = pick('state', [EventState.Completed, EventState.Canceled], undefined);
      if (typeof id === 'string' && state !== undefined) trigger = { type, afterSeconds, eventId: id, state };
      break;
    }
    case TriggerType.AutoscalingTargetLifecycleState: {
      const state = pick('state', AUTOSCALING_TARGET_STATES, undefined);
      if (state !== undefined) trigger = { type, afterSeconds, state };
      break;
    }
    default:
      errors.push({
        pointer: '/type',
        message: `type must be one of ${Object.values(TriggerType).join(', ')}`,
      });
  }
  for (const key of Object.keys(input)) {
    if (!allowed.has(key)) errors.push({ pointer: `/${key}`, message: `unknown field "${key}"` });
  }
  if (errors.length > 0 || trigger === undefined) return { ok: false, errors };
  return { ok: true, trigger };
}

/** `21 Jan 2026 09:00:43 GMT`, the time format of maintenance events. */
export function formatEventTime(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const month = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const hms = d.toISOString().slice(11, 19);
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()} ${hms} GMT`;
}

/** The event state of one instance, as the metadata tree reads it. */
export interface InstanceEvents {
  spotAction(): { action: SpotAction; time: string } | undefined;
  rebalance(): { noticeTime: string } | undefined;
  scheduled(): ScheduledEvent[];
  history(): ScheduledEvent[];
  autoscalingTargetState(): string | null;
  /** Registers a trigger; it fires after its delay. Returns when it fires (ms since the epoch). */
  schedule(trigger: Trigger): number;
  /** Cancels triggers not yet fired (on shutdown). */
  close(): void;
}

/** Creates the event state of one instance: static events from the config, then the triggers as they fire. */
export function createInstanceEvents(deps: {
  clock: Clock;
  scheduler: Scheduler;
  scheduled: ScheduledEvent[];
  history: ScheduledEvent[];
  autoscalingTargetState: string | null;
  random?: (bytes: number) => Buffer;
}): InstanceEvents {
  const { clock, scheduler } = deps;
  const random = deps.random ?? randomBytes;
  let spot: { action: SpotAction; time: string } | undefined;
  let rebalance: { noticeTime: string } | undefined;
  let scheduled = deps.scheduled.map((e) => ({ ...e }));
  let history = deps.history.map((e) => ({ ...e }));
  let asg = deps.autoscalingTargetState;
  const cancels = new Set<() => void>();

  function fire(trigger: Trigger): void {
    const now = clock.now();
    switch (trigger.type) {
      case 'spot-interruption':
        spot = { action: trigger.action, time: formatIsoSeconds(now + trigger.noticeSeconds * 1000) };
        return;
      case 'rebalance-recommendation':
        rebalance = { noticeTime: formatIsoSeconds(now) };
        return;
      case 'scheduled-event': {
        const notBefore = now + trigger.notBeforeSeconds * 1000;
        const event: ScheduledEvent = {
          NotBefore: formatEventTime(notBefore),
          Code: trigger.code,
          Description: trigger.description,
          EventId: trigger.eventId ?? `instance-event-${random(9).toString('hex').slice(0, 17)}`,
          ...(trigger.windowSeconds > 0
            ? { NotAfter: formatEventTime(notBefore + trigger.windowSeconds * 1000) }
            : {}),
          ...(trigger.deadlineSeconds === undefined
            ? {}
            : { NotBeforeDeadline: formatEventTime(notBefore + trigger.deadlineSeconds * 1000) }),
          State: EventState.Active,
        };
        scheduled = [...scheduled.filter((e) => e.EventId !== event.EventId), event];
        return;
      }
      case 'scheduled-event-state': {
        const event = scheduled.find((e) => e.EventId === trigger.eventId);
        if (event === undefined) return;
        scheduled = scheduled.filter((e) => e !== event);
        history = [...history, { ...event, State: trigger.state }];
        return;
      }
      case 'autoscaling-target-lifecycle-state':
        asg = trigger.state;
        return;
    }
  }

  return {
    spotAction: () => (spot === undefined ? undefined : { ...spot }),
    rebalance: () => (rebalance === undefined ? undefined : { ...rebalance }),
    scheduled: () => scheduled.map((e) => ({ ...e })),
    history: () => history.map((e) => ({ ...e })),
    autoscalingTargetState: () => asg,
    schedule(trigger) {
      const firesAt = clock.now() + trigger.afterSeconds * 1000;
      if (trigger.afterSeconds === 0) {
        fire(trigger);
        return firesAt;
      }
      const cancel = scheduler.schedule(trigger.afterSeconds * 1000, () => {
        cancels.delete(cancel);
        fire(trigger);
      });
      cancels.add(cancel);
      return firesAt;
    },
    close() {
      for (const cancel of cancels) cancel();
      cancels.clear();
    },
  };
}
