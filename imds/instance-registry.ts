// The instances the service knows, each with its metadata options, tokens and credential issuers. Options
// have two faces: `reported` (what modify-instance-metadata-options and describe return, with State) and
// `effective` (what the metadata server enforces). A modification is reported at once with State `pending`
// and takes effect after the apply delay, when State becomes `applied`.
import {
  OptionsState,
  type InstanceMetadataOptions,
  DEFAULT_OPTIONS,
} from '../compiler/instance-metadata-options/options.js';
import type { Clock } from './clock.js';
import type { ImdsConfig, InstanceConfig } from './config.js';
import { createCredentialIssuer, type CredentialIssuer } from './credential-issuer.js';
import { renderIdentityDocument } from './identity-document.js';
import { createIdentitySigner, type IdentitySigner } from './identity-signer.js';
import {
  createInstanceEvents,
  EventState,
  formatEventTime,
  parseTrigger,
  type InstanceEvents,
  type ScheduledEvent,
  type Trigger,
} from './instance-events.js';
import { ApiErrorCode, type ApiError, type ModifyRequest } from './modify-request.js';
import type { Scheduler } from './scheduler.js';
import { createTokenStore, type TokenStore } from './token-store.js';

/** One instance and its live state. */
export interface InstanceRecord {
  readonly config: InstanceConfig;
  /** The options the metadata server enforces now. */
  readonly effective: () => InstanceMetadataOptions;
  /** The options as reported to the management API (latest requested values and State). */
  readonly reported: () => InstanceMetadataOptions;
  readonly tokens: TokenStore;
  readonly roleCredentials: CredentialIssuer;
  readonly computeCredentials: CredentialIssuer;
  /** Spot notices, rebalance recommendations, maintenance events, Auto Scaling state. */
  readonly events: InstanceEvents;
  /** The signed instance identity document (computed once, on first read). */
  readonly identity: () => IdentityData;
}

/** The dynamic instance-identity data of one instance. */
export interface IdentityData {
  document: string;
  signature: string;
  pkcs7: string;
}

/** Output of modify-instance-metadata-options and of describe. */
export interface MetadataOptionsResponse {
  InstanceId: string;
  InstanceMetadataOptions: InstanceMetadataOptions;
}

/** The set of instances. */
export interface InstanceRegistry {
  get(instanceId: string): InstanceRecord | undefined;
  ids(): string[];
  /** Applies a validated modification, or reports an unknown instance. */
  modify(
    request: ModifyRequest,
  ): { ok: true; response: MetadataOptionsResponse } | { ok: false; error: ApiError };
  describe(instanceId: string): MetadataOptionsResponse | undefined;
  /** Registers a trigger on an instance; reports an unknown instance or one the trigger cannot apply to. */
  trigger(
    instanceId: string,
    trigger: Trigger,
  ): { ok: true; firesAt: number } | { ok: false; error: ApiError };
  /** PEM of the certificate that verifies the identity documents. */
  identityCertificate(): string;
  /** Cancels pending applications (on shutdown). */
  close(): void;
}

/** Options an instance starts with, from its config. Already in effect, so State is `applied`. */
export function createInitialOptions(instance: InstanceConfig): InstanceMetadataOptions {
  return {
    State: OptionsState.Applied,
    HttpTokens: instance.metadataOptions.httpTokens,
    HttpPutResponseHopLimit: instance.metadataOptions.httpPutResponseHopLimit,
    HttpEndpoint: instance.metadataOptions.httpEndpoint,
    HttpProtocolIpv6: DEFAULT_OPTIONS.HttpProtocolIpv6,
    InstanceMetadataTags: instance.metadataOptions.instanceMetadataTags,
  };
}

/** A maintenance event of the config with the fields the config may leave out filled in. */
function completeEvent(e: InstanceConfig['events']['scheduled'][number], index: number): ScheduledEvent {
  const notBefore = Date.parse(e.NotBefore);
  return {
    NotBefore: formatEventTime(notBefore),
    Code: e.Code,
    Description: e.Description ?? `scheduled ${e.Code.replace(/^(instance|system)-/, '')}`,
    EventId: e.EventId ?? `instance-event-${index.toString(16).padStart(17, '0')}`,
    ...(e.NotAfter === undefined ? {} : { NotAfter: formatEventTime(Date.parse(e.NotAfter)) }),
    ...(e.NotBeforeDeadline === undefined
      ? {}
      : { NotBeforeDeadline: formatEventTime(Date.parse(e.NotBeforeDeadline)) }),
    State: e.State,
  };
}

function notFound(instanceId: string): ApiError {
  return {
    code: ApiErrorCode.InstanceIdNotFound,
    parameter: 'instance-id',
    message: `The instance ID '${instanceId}' does not exist.`,
  };
}

/** Creates the registry for every instance of the config. */
export function createInstanceRegistry(deps: {
  config: ImdsConfig;
  clock: Clock;
  scheduler: Scheduler;
  /** Signs identity documents; one is created when not given. */
  signer?: IdentitySigner;
}): InstanceRegistry {
  const { config, clock, scheduler } = deps;
  const signer = deps.signer ?? createIdentitySigner({ clock });
  const startedAt = clock.now();
  interface Slot {
    record: InstanceRecord;
    effective: InstanceMetadataOptions;
    reported: InstanceMetadataOptions;
    cancelApply: (() => void) | undefined;
  }
  const slots = new Map<string, Slot>();
  for (const instance of config.instances) {
    const initial = createInitialOptions(instance);
    let identity: IdentityData | undefined;
    const allEvents = [...instance.events.scheduled, ...instance.events.history].map(completeEvent);
    const slot: Slot = {
      effective: initial,
      reported: { ...initial },
      cancelApply: undefined,
      record: {
        config: instance,
        effective: () => ({ ...slot.effective }),
        reported: () => ({ ...slot.reported }),
        tokens: createTokenStore({
          clock,
          maxTokens: config.maxTokens,
          maxTokensPerClient: config.maxTokensPerClient,
        }),
        roleCredentials: createCredentialIssuer({ clock, settings: config.credentials }),
        computeCredentials: createCredentialIssuer({ clock, settings: config.credentials }),
        events: createInstanceEvents({
          clock,
          scheduler,
          scheduled: allEvents.filter((e) => e.State === EventState.Active),
          history: allEvents.filter((e) => e.State !== EventState.Active),
          autoscalingTargetState: instance.autoscalingTargetLifecycleState,
        }),
        identity: () => {
          if (identity !== undefined) return identity;
          const pending = instance.pendingTime === null ? startedAt : Date.parse(instance.pendingTime);
          const document = renderIdentityDocument(instance, pending);
          identity = { document, signature: signer.signature(document), pkcs7: signer.pkcs7(document) };
          return identity;
        },
      },
    };
    slots.set(instance.instanceId, slot);
    // The config was validated (parseConfig), so every trigger parses; one that would not is skipped.
    for (const t of instance.triggers) {
      const parsed = parseTrigger(t);
      if (parsed.ok) slot.record.events.schedule(parsed.trigger);
    }
  }

  function respond(instanceId: string, options: InstanceMetadataOptions): MetadataOptionsResponse {
    return { InstanceId: instanceId, InstanceMetadataOptions: { ...options } };
  }

  return {
    get: (id) => slots.get(id)?.record,
    ids: () => [...slots.keys()],
    modify(request) {
      const slot = slots.get(request.instanceId);
      if (slot === undefined) return { ok: false, error: notFound(request.instanceId) };
      const next: InstanceMetadataOptions = {
        ...slot.reported,
        ...request.changes,
        State: OptionsState.Pending,
      };
      slot.reported = next;
      slot.cancelApply?.();
      slot.cancelApply = scheduler.schedule(config.applyDelayMs, () => {
        slot.effective = { ...next, State: OptionsState.Applied };
        slot.reported = { ...next, State: OptionsState.Applied };
        slot.cancelApply = undefined;
      });
      return { ok: true, response: respond(request.instanceId, next) };
    },
    describe(id) {
      const slot = slots.get(id);
      return slot === undefined ? undefined : respond(id, slot.reported);
    },
    trigger(instanceId, trigger) {
      const slot = slots.get(instanceId);
      if (slot === undefined) return { ok: false, error: notFound(instanceId) };
      const lifeCycle = slot.record.config.instanceLifeCycle;
      if (trigger.type === 'spot-interruption' && lifeCycle !== 'spot') {
        return {
          ok: false,
          error: {
            code: ApiErrorCode.UnsupportedOperation,
            message: `A spot interruption needs a spot instance; ${instanceId} is ${lifeCycle}.`,
          },
        };
      }
      return { ok: true, firesAt: slot.record.events.schedule(trigger) };
    },
    identityCertificate: () => signer.certificatePem(),
    close() {
      for (const slot of slots.values()) {
        slot.cancelApply?.();
        slot.record.events.close();
      }
    },
  };
}
