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

/** Creates the registry for every instance of the config. */
export function createInstanceRegistry(deps: {
  config: ImdsConfig;
  clock: Clock;
  scheduler: Scheduler;
}): InstanceRegistry {
  const { config, clock, scheduler } = deps;
  interface Slot {
    record: InstanceRecord;
    effective: InstanceMetadataOptions;
    reported: InstanceMetadataOptions;
    cancelApply: (() => void) | undefined;
  }
  const slots = new Map<string, Slot>();
  for (const instance of config.instances) {
    const initial = createInitialOptions(instance);
    const slot: Slot = {
      effective: initial,
      reported: { ...initial },
      cancelApply: undefined,
      record: {
        config: instance,
        effective: () => ({ ...slot.effective }),
        reported: () => ({ ...slot.reported }),
        tokens: createTokenStore({ clock, maxTokens: config.maxTokens }),
        roleCredentials: createCredentialIssuer({ clock, settings: config.credentials }),
        computeCredentials: createCredentialIssuer({ clock, settings: config.credentials }),
      },
    };
    slots.set(instance.instanceId, slot);
  }

  function respond(instanceId: string, options: InstanceMetadataOptions): MetadataOptionsResponse {
    return { InstanceId: instanceId, InstanceMetadataOptions: { ...options } };
  }

  return {
    get: (id) => slots.get(id)?.record,
    ids: () => [...slots.keys()],
    modify(request) {
      const slot = slots.get(request.instanceId);
      if (slot === undefined) {
        return {
          ok: false,
          error: {
            code: ApiErrorCode.InstanceIdNotFound,
            parameter: 'instance-id',
            message: `The instance ID '${request.instanceId}' does not exist.`,
          },
        };
      }
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
    close() {
      for (const slot of slots.values()) slot.cancelApply?.();
    },
  };
}
