// Configuration of the metadata service: the instances it serves (identity, addresses, placement, role,
// user data, tags, metadata options) and the service settings. `parseConfig` validates an already-parsed
// object against one JSON Schema (ajv, defaults filled in) and returns the config or errors as data.
import { Ajv, type ErrorObject } from 'ajv';
import {
  DEFAULT_OPTIONS,
  HOP_LIMIT_MAX,
  HOP_LIMIT_MIN,
  HttpEndpoint,
  HttpTokens,
  InstanceMetadataTags,
} from '../compiler/instance-metadata-options/options.js';
import {
  formatListenAddress,
  parseListenAddress,
  type ListenAddress,
} from '../compiler/net/listen-address.js';
import { AUTOSCALING_TARGET_STATES, EventCode, EventState, parseTrigger } from './instance-events.js';

/** The address the metadata service listens on by default (as on the real service). */
export const DEFAULT_METADATA_LISTEN = '169.254.169.254:80';
/** The address of the management endpoint by default: loopback, and never the metadata port. */
export const DEFAULT_MANAGE_LISTEN = '127.0.0.1:9180';

/** The instance role exposed under iam/. */
export interface RoleConfig {
  name: string;
  instanceProfileArn: string;
  instanceProfileId: string;
}

/** One public key exposed under public-keys/. */
export interface PublicKeyConfig {
  name: string;
  openssh: string;
}

/** A maintenance event written in the config, in the field names the service serves. */
export interface EventConfig {
  Code: string;
  State: string;
  NotBefore: string;
  NotAfter?: string;
  NotBeforeDeadline?: string;
  Description?: string;
  EventId?: string;
}

/** User data served when the config says nothing: a cloud-init script, so the seed's endpoint answers 200. */
export const DEFAULT_USER_DATA =
  '#!/bin/bash\n# rtctl imds: default user data (set userData: null for an instance without any)\necho "instance i-0123456789abcdef0 booted"\n';

/** Metadata options an instance starts with (request names in camelCase). */
export interface MetadataOptionsConfig {
  httpEndpoint: HttpEndpoint;
  httpTokens: HttpTokens;
  httpPutResponseHopLimit: number;
  instanceMetadataTags: InstanceMetadataTags;
}

/** Everything the service knows about one instance. */
export interface InstanceConfig {
  instanceId: string;
  instanceType: string;
  imageId: string;
  imageLaunchIndex: number;
  imageManifestPath: string;
  hostname: string;
  localHostname: string;
  publicHostname: string | null;
  localIpv4: string;
  publicIpv4: string | null;
  mac: string;
  accountId: string;
  reservationId: string;
  securityGroups: string[];
  securityGroupIds: string[];
  profile: string;
  instanceLifeCycle: string;
  instanceAction: string;
  autoscalingTargetLifecycleState: string | null;
  /** CPU architecture in the instance identity document. */
  architecture: string;
  /** When the instance was launched (identity document `pendingTime`, ISO 8601); null: when the service started. */
  pendingTime: string | null;
  placement: { availabilityZone: string; availabilityZoneId: string; region: string };
  network: {
    interfaceId: string;
    deviceNumber: number;
    subnetId: string;
    subnetIpv4CidrBlock: string;
    vpcId: string;
    vpcIpv4CidrBlock: string;
  };
  blockDeviceMapping: Record<string, string>;
  services: { domain: string; partition: string };
  events: { scheduled: EventConfig[]; history: EventConfig[] };
  /** Spot interruptions, rebalance recommendations, maintenance events and Auto Scaling states to come (see instance-events.ts). */
  triggers: unknown[];
  role: RoleConfig | null;
  publicKeys: PublicKeyConfig[];
  userData: string | null;
  tags: Record<string, string>;
  metadataOptions: MetadataOptionsConfig;
  /** Where this instance's metadata service listens; required for every instance after the first. */
  listen?: string;
}

/** Settings of the temporary credentials. */
export interface CredentialsConfig {
  lifetimeSeconds: number;
  rotateBeforeSeconds: number;
  type: string;
}

/** The whole configuration, defaults filled in. */
export interface ImdsConfig {
  listen: string;
  manageListen: string;
  /** Delay between modify-instance-metadata-options and the change taking effect (State pending → applied). */
  applyDelayMs: number;
  /** Bound on the number of live tokens per instance. */
  maxTokens: number;
  /** Bound on the number of live tokens of one client address (at most maxTokens); past it the client's own oldest token goes. */
  maxTokensPerClient: number;
  credentials: CredentialsConfig;
  instances: InstanceConfig[];
}

/** One configuration error: a code, where it is (JSON pointer; file position added by the loader), and what is wrong. */
export interface ConfigError {
  code: 'imds-config-read' | 'imds-config-syntax' | 'imds-config-schema' | 'imds-config-conflict';
  message: string;
  pointer: string;
}

const str = (d: string) => ({ type: 'string', minLength: 1, default: d });
const nullableStr = (d: string | null) => ({ type: ['string', 'null'], default: d });

const EVENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['Code', 'NotBefore'],
  properties: {
    Code: { enum: Object.values(EventCode) },
    State: { enum: Object.values(EventState), default: EventState.Active },
    NotBefore: { type: 'string', format: 'event-time' },
    NotAfter: { type: 'string', format: 'event-time' },
    NotBeforeDeadline: { type: 'string', format: 'event-time' },
    Description: { type: 'string', minLength: 1, maxLength: 255 },
    EventId: { type: 'string', pattern: '^instance-event-[0-9a-f]{17}$' },
  },
} as const;

const INSTANCE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    instanceId: { type: 'string', pattern: '^i-[0-9a-f]{8,17}$', default: 'i-0123456789abcdef0' },
    instanceType: str('m5.large'),
    imageId: str('img-0abcdef1234567890'),
    imageLaunchIndex: { type: 'integer', minimum: 0, default: 0 },
    imageManifestPath: str('(unknown)'),
    hostname: str('ip-10-0-1-23.compute.internal'),
    localHostname: str('ip-10-0-1-23.compute.internal'),
    publicHostname: nullableStr('public-203-0-113-10.compute.example'),
    localIpv4: { type: 'string', format: 'ipv4', default: '10.0.1.23' },
    publicIpv4: { type: ['string', 'null'], format: 'ipv4', default: '203.0.113.10' },
    mac: { type: 'string', pattern: '^[0-9a-f]{2}(:[0-9a-f]{2}){5}$', default: '0e:12:34:56:78:9a' },
    accountId: { type: 'string', pattern: '^[0-9]{12}$', default: '123456789012' },
    reservationId: str('r-0123456789abcdef0'),
    securityGroups: { type: 'array', items: { type: 'string', minLength: 1 }, default: ['default'] },
    securityGroupIds: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: ['sg-0123456789abcdef0'],
    },
    profile: str('default-hvm'),
    instanceLifeCycle: { enum: ['on-demand', 'spot', 'scheduled', 'capacity-block'], default: 'on-demand' },
    instanceAction: str('none'),
    autoscalingTargetLifecycleState: {
      enum: [...AUTOSCALING_TARGET_STATES, null],
      default: 'InService',
    },
    architecture: { enum: ['x86_64', 'arm64', 'i386'], default: 'x86_64' },
    pendingTime: { type: ['string', 'null'], format: 'iso-time', default: null },
    placement: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        availabilityZone: str('us-east-1a'),
        availabilityZoneId: str('use1-az1'),
        region: str('us-east-1'),
      },
    },
    network: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        interfaceId: str('eni-0123456789abcdef0'),
        deviceNumber: { type: 'integer', minimum: 0, default: 0 },
        subnetId: str('subnet-0123456789abcdef0'),
        subnetIpv4CidrBlock: str('10.0.1.0/24'),
        vpcId: str('vpc-0123456789abcdef0'),
        vpcIpv4CidrBlock: str('10.0.0.0/16'),
      },
    },
    blockDeviceMapping: {
      type: 'object',
      propertyNames: { pattern: '^[A-Za-z0-9._-]+$' },
      additionalProperties: { type: 'string', minLength: 1 },
      default: { ami: '/dev/xvda', root: '/dev/xvda' },
    },
    services: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { domain: str('cloud.example'), partition: str('cloud') },
    },
    events: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        scheduled: { type: 'array', items: EVENT_SCHEMA, maxItems: 100, default: [] },
        history: { type: 'array', items: EVENT_SCHEMA, maxItems: 100, default: [] },
      },
    },
    triggers: { type: 'array', items: { type: 'object' }, maxItems: 100, default: [] },
    role: {
      type: ['object', 'null'],
      additionalProperties: false,
      default: {},
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9+=,.@_-]{1,64}$', default: 'rtctl-node-role' },
        instanceProfileArn: str('arn:cloud:iam::123456789012:instance-profile/rtctl-node'),
        instanceProfileId: str('AIPA0123456789ABCDEFG'),
      },
    },
    publicKeys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'openssh'],
        properties: {
          name: { type: 'string', pattern: '^[^/\\n=]+$' },
          openssh: { type: 'string', minLength: 1 },
        },
      },
      default: [
        {
          name: 'rtctl-key',
          openssh:
            'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ0Y3RsLWltZHMtZXhhbXBsZS1rZXktbm90LXJlYWw rtctl-key',
        },
      ],
    },
    userData: { type: ['string', 'null'], maxLength: 16384, default: DEFAULT_USER_DATA },
    tags: {
      type: 'object',
      propertyNames: { pattern: '^[^/]{1,128}$' },
      additionalProperties: { type: 'string', maxLength: 256 },
      default: { Name: 'rtctl-instance' },
    },
    metadataOptions: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        httpEndpoint: { enum: Object.values(HttpEndpoint), default: DEFAULT_OPTIONS.HttpEndpoint },
        httpTokens: { enum: Object.values(HttpTokens), default: DEFAULT_OPTIONS.HttpTokens },
        httpPutResponseHopLimit: {
          type: 'integer',
          minimum: HOP_LIMIT_MIN,
          maximum: HOP_LIMIT_MAX,
          default: DEFAULT_OPTIONS.HttpPutResponseHopLimit,
        },
        instanceMetadataTags: {
          enum: Object.values(InstanceMetadataTags),
          default: DEFAULT_OPTIONS.InstanceMetadataTags,
        },
      },
    },
    listen: { type: 'string' },
  },
} as const;

const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    listen: { type: 'string', default: DEFAULT_METADATA_LISTEN },
    manageListen: { type: 'string', default: DEFAULT_MANAGE_LISTEN },
    applyDelayMs: { type: 'integer', minimum: 0, maximum: 600000, default: 1000 },
    maxTokens: { type: 'integer', minimum: 1, maximum: 1000000, default: 10000 },
    maxTokensPerClient: { type: 'integer', minimum: 1, maximum: 1000000, default: 1000 },
    credentials: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        lifetimeSeconds: { type: 'integer', minimum: 900, maximum: 43200, default: 21600 },
        rotateBeforeSeconds: { type: 'integer', minimum: 60, maximum: 3600, default: 900 },
        type: str('CLOUD-HMAC'),
      },
    },
    instances: { type: 'array', minItems: 1, items: INSTANCE_SCHEMA, default: [{}] },
  },
} as const;

const ajv = new Ajv({ useDefaults: true, allErrors: true, strict: true, strictTypes: false });
ajv.addFormat(
  'ipv4',
  /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/,
);
ajv.addFormat('event-time', { type: 'string', validate: (s: string) => !Number.isNaN(Date.parse(s)) });
ajv.addFormat('iso-time', {
  type: 'string',
  validate: (s: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(s) && !Number.isNaN(Date.parse(s)),
});
const validateConfig = ajv.compile(CONFIG_SCHEMA);

function describeAjvError(e: ErrorObject): ConfigError {
  const where = e.instancePath === '' ? 'the document' : e.instancePath;
  let message = `${where} ${e.message ?? 'is invalid'}`;
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty?: string }).additionalProperty ?? '?';
    return {
      code: 'imds-config-schema',
      pointer: `${e.instancePath}/${extra}`,
      message: `unknown field "${extra}"`,
    };
  }
  if (e.keyword === 'enum') {
    const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    message = `${where} must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { code: 'imds-config-schema', pointer: e.instancePath, message };
}

/** The effective listen address of each instance (the first takes the top-level `listen`). */
export function resolveInstanceListen(config: ImdsConfig, index: number): string | undefined {
  const instance = config.instances[index];
  if (instance === undefined) return undefined;
  return instance.listen ?? (index === 0 ? config.listen : undefined);
}

function checkConflicts(config: ImdsConfig): ConfigError[] {
  const errors: ConfigError[] = [];
  const seenIds = new Map<string, number>();
  const seenListen = new Map<string, string>();
  const manage = parseListenAddress(config.manageListen);
  if (!manage.ok)
    errors.push({ code: 'imds-config-schema', pointer: '/manageListen', message: manage.error });
  const top = parseListenAddress(config.listen);
  if (!top.ok) errors.push({ code: 'imds-config-schema', pointer: '/listen', message: top.error });
  if (manage.ok) seenListen.set(formatListenAddress(manage.value), '/manageListen');
  config.instances.forEach((instance, i) => {
    instance.triggers.forEach((t, j) => {
      const parsed = parseTrigger(t);
      if (!parsed.ok) {
        for (const e of parsed.errors)
          errors.push({
            code: 'imds-config-schema',
            pointer: `/instances/${i}/triggers/${j}${e.pointer}`,
            message: e.message,
          });
      } else if (parsed.trigger.type === 'spot-interruption' && instance.instanceLifeCycle !== 'spot') {
        errors.push({
          code: 'imds-config-conflict',
          pointer: `/instances/${i}/triggers/${j}/type`,
          message: `a spot interruption needs a spot instance; instanceLifeCycle is ${instance.instanceLifeCycle}`,
        });
      }
    });
    const previous = seenIds.get(instance.instanceId);
    if (previous !== undefined) {
      errors.push({
        code: 'imds-config-conflict',
        pointer: `/instances/${i}/instanceId`,
        message: `instance id ${instance.instanceId} is already used by /instances/${previous}`,
      });
    }
    seenIds.set(instance.instanceId, i);
    const listen = resolveInstanceListen(config, i);
    const pointer = instance.listen === undefined ? '/listen' : `/instances/${i}/listen`;
    if (listen === undefined) {
      errors.push({
        code: 'imds-config-schema',
        pointer: `/instances/${i}`,
        message: 'every instance after the first needs its own "listen" address',
      });
      return;
    }
    const parsed = parseListenAddress(listen);
    if (!parsed.ok) {
      if (instance.listen !== undefined)
        errors.push({ code: 'imds-config-schema', pointer, message: parsed.error });
      return;
    }
    const key = formatListenAddress(parsed.value);
    const clash = seenListen.get(key);
    if (clash !== undefined && parsed.value.port !== 0) {
      errors.push({ code: 'imds-config-conflict', pointer, message: `${key} is already used by ${clash}` });
    }
    seenListen.set(key, pointer);
  });
  if (config.credentials.rotateBeforeSeconds >= config.credentials.lifetimeSeconds) {
    errors.push({
      code: 'imds-config-conflict',
      pointer: '/credentials/rotateBeforeSeconds',
      message: 'rotateBeforeSeconds must be smaller than lifetimeSeconds',
    });
  }
  return errors;
}

/** Validates a parsed document (`undefined`/`null` means an empty file) and fills in defaults. */
export function parseConfig(
  input: unknown,
): { ok: true; config: ImdsConfig } | { ok: false; errors: ConfigError[] } {
  const doc: unknown = input === undefined || input === null ? {} : structuredClone(input);
  if (!validateConfig(doc)) {
    return { ok: false, errors: (validateConfig.errors ?? []).map(describeAjvError) };
  }
  const config = doc as ImdsConfig;
  const errors = checkConflicts(config);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

/** The default configuration (one instance with every default). */
export function createDefaultConfig(): ImdsConfig {
  const parsed = parseConfig({});
  if (!parsed.ok)
    throw new Error(`default config is invalid: ${parsed.errors.map((e) => e.message).join('; ')}`);
  return parsed.config;
}

/** Re-exported so callers that hold a config can parse its addresses without another import. */
export type { ListenAddress };
