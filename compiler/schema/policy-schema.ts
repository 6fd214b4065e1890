// The JSON Schemas of RuntimePolicy and RuntimeHostPolicy: the single source for ajv validation (schema/validate.ts),
// for the TypeScript types (model/types.ts derives them with FromSchema) and for the CRDs' openAPIV3Schema
// (backends/crd strips what a structural schema may not carry). Built from small const fragments so that the
// derived types stay exact.
import { SYSCALL_NAMES } from './syscall-names.js';

/** API group and version of both kinds. */
export const API_GROUP = 'security.runtime.com';
export const API_VERSION = 'v1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}` as const;

/** Capability names (lower case, without `cap_`), anchored at both ends (the reference anchors only the end). */
export const CAPABILITY_NAMES = [
  'chown',
  'dac_override',
  'dac_read_search',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'setpcap',
  'linux_immutable',
  'net_bind_service',
  'net_broadcast',
  'net_admin',
  'net_raw',
  'ipc_lock',
  'ipc_owner',
  'sys_module',
  'sys_rawio',
  'sys_chroot',
  'sys_ptrace',
  'sys_pacct',
  'sys_admin',
  'sys_boot',
  'sys_nice',
  'sys_resource',
  'sys_time',
  'sys_tty_config',
  'mknod',
  'lease',
  'audit_write',
  'audit_control',
  'setfcap',
  'mac_override',
  'mac_admin',
] as const;

/** Network protocol names in both cases the reference accepts. */
export const PROTOCOL_NAMES = [
  'tcp',
  'udp',
  'raw',
  'icmp',
  'icmpv6',
  'sctp',
  'stream',
  'dgram',
  'rdm',
  'seqpacket',
  'dccp',
  'packet',
  'all',
] as const;

/** Protocols an address rule may name: those whose sockets connect or send to an address. */
export const ADDRESS_PROTOCOL_NAMES = ['tcp', 'udp', 'icmp', 'icmpv6', 'sctp'] as const;
/** Protocols of address rules that have ports. */
export const PORT_PROTOCOL_NAMES = ['tcp', 'udp', 'sctp'] as const;

const CAPABILITY_PATTERN = `^(${CAPABILITY_NAMES.join('|')})$`;
const PROTOCOL_PATTERN = `^(${PROTOCOL_NAMES.flatMap((p) => [p, p.toUpperCase()]).join('|')})$`;
const ADDRESS_PROTOCOL_PATTERN = `^(${ADDRESS_PROTOCOL_NAMES.flatMap((p) => [p, p.toUpperCase()]).join('|')})$`;

/**
 * Size bounds. Kubernetes' own where it has one (label values 63 characters, DNS names 253); elsewhere far
 * above any real policy (the corpus' largest list holds a few dozen rules) and low enough that a document at
 * every bound is checked in milliseconds. The exhaustive schema pass copies documents cut just past these
 * (schema/clip-for-report.ts): raise those limits with these.
 */
export const SCHEMA_BOUNDS = {
  /** Rules in one list (matchPaths, matchDirectories, ...). */
  rules: 1024,
  /** Entries of one fromSource list. */
  sources: 256,
  /** Tags of one rule or section. */
  tags: 64,
  /** Characters of one tag. */
  tagLength: 256,
  /** Characters of a message, a pattern, an argument. */
  text: 1024,
  /** System call names in one rule. */
  syscalls: 512,
  /** Selector and node selector labels. */
  labels: 256,
  /** Characters of a label value (Kubernetes' limit). */
  labelValue: 63,
  /** Characters of `key=value` in matchExpressions: a qualified key (317) and a value (63). */
  labelExpression: 381,
  /** Annotations and labels in metadata. */
  metadataEntries: 256,
  /** Characters of an annotation value (Kubernetes bounds all annotations together at 256 KiB). */
  annotationValue: 262_144,
  /** Match expressions of a selector, and values of one expression. */
  expressions: 64,
  /** Presets of a policy. */
  presets: 16,
  /** Characters of a DNS name (domains, device classes). */
  dnsName: 253,
  /** Ports of one address rule. */
  ports: 64,
  /** Characters of a CIDR block (the longest IPv6 text with a prefix is 49). */
  cidr: 64,
  /** Characters of the AppArmor profile text. */
  apparmor: 65_536,
} as const;

const action = {
  type: 'string',
  enum: ['Allow', 'Audit', 'Block'],
  description:
    'Block denies and alerts, Audit allows and alerts, Allow makes the listed operations the allowed set.',
} as const;
const severity = {
  type: 'integer',
  minimum: 1,
  maximum: 10,
  description: 'Alert severity, 1 (lowest) to 10.',
} as const;
const tags = {
  type: 'array',
  maxItems: SCHEMA_BOUNDS.tags,
  items: { type: 'string', maxLength: SCHEMA_BOUNDS.tagLength },
  description: 'Free-form tags copied into alerts.',
} as const;
const message = {
  type: 'string',
  maxLength: SCHEMA_BOUNDS.text,
  description: 'Message copied into alerts.',
} as const;
const boolean = { type: 'boolean' } as const;

/** An absolute file path that does not end in `/` (the reference's pattern and bound). */
const absolutePath = {
  type: 'string',
  maxLength: 200,
  // The reference writes ^\/+.*[^\/]$; the same language without the leading + matches in linear time.
  pattern: '^\\/.*[^\\/]$',
  description: 'Absolute path of a file or binary; must not end in /.',
} as const;
/** An absolute directory path ending in `/`. */
const directoryPath = {
  type: 'string',
  maxLength: 200,
  pattern: '^\\/$|^\\/.*\\/$',
  description: 'Absolute directory path ending in /.',
} as const;

/**
 * A fromSource list: the acting executable by path, or by directory (recursive or not). An empty one
 * (`fromSource:` with no value, or `[]`) is accepted as the reference accepts it, means no source restriction,
 * and is warned about (RT3017).
 */
const fromSource = {
  type: 'array',
  maxItems: SCHEMA_BOUNDS.sources,
  nullable: true,
  description:
    'Restricts the rule to operations done by these executables (for exec: the parent); empty or null: no restriction.',
  items: {
    type: 'object',
    additionalProperties: false,
    properties: { path: absolutePath, dir: directoryPath, recursive: boolean },
    oneOf: [{ required: ['path'] }, { required: ['dir'] }],
  },
} as const;

/**
 * fromSource of syscalls rules: the reference accepts a directory there without the trailing `/`; we accept it
 * for compatibility and warn (RT3015), normalizing it when lowering.
 */
const syscallFromSource = {
  type: 'array',
  maxItems: SCHEMA_BOUNDS.sources,
  nullable: true,
  description: 'Restricts the rule to system calls made by these executables; empty or null: no restriction.',
  items: {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: absolutePath,
      dir: { type: 'string', minLength: 1, maxLength: 200, description: 'Absolute directory path.' },
      recursive: boolean,
    },
    oneOf: [{ required: ['path'] }, { required: ['dir'] }],
  },
} as const;

/** Fields every rule and section may carry. */
const inherited = { severity, tags, message, action } as const;

const processMatchPath = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: absolutePath,
    execname: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\/]+$',
      description: 'Binary base name.',
    },
    ownerOnly: boolean,
    pts: boolean,
    allowedArgs: {
      type: 'array',
      maxItems: 20,
      items: { type: 'string', maxLength: SCHEMA_BOUNDS.text },
    },
    fromSource,
    ...inherited,
  },
  oneOf: [{ required: ['path'] }, { required: ['execname'] }],
} as const;

const processMatchDirectory = {
  type: 'object',
  additionalProperties: false,
  required: ['dir'],
  properties: {
    dir: directoryPath,
    recursive: boolean,
    ownerOnly: boolean,
    pts: boolean,
    fromSource,
    ...inherited,
  },
} as const;

const processMatchPattern = {
  type: 'object',
  additionalProperties: false,
  required: ['pattern'],
  properties: {
    pattern: { type: 'string', minLength: 1, maxLength: SCHEMA_BOUNDS.text },
    ownerOnly: boolean,
    ...inherited,
  },
} as const;

const process = {
  type: 'object',
  additionalProperties: false,
  description: 'Rules on process execution.',
  properties: {
    matchPaths: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: processMatchPath },
    matchDirectories: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: processMatchDirectory },
    matchPatterns: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: processMatchPattern },
    ...inherited,
  },
} as const;

const fileMatchPath = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: absolutePath,
    ownerOnly: boolean,
    readOnly: boolean,
    pts: boolean,
    fromSource,
    ...inherited,
  },
} as const;

const fileMatchDirectory = {
  type: 'object',
  additionalProperties: false,
  required: ['dir'],
  properties: {
    dir: directoryPath,
    recursive: boolean,
    ownerOnly: boolean,
    readOnly: boolean,
    pts: boolean,
    fromSource,
    ...inherited,
  },
} as const;

const fileMatchPattern = {
  type: 'object',
  additionalProperties: false,
  required: ['pattern'],
  properties: {
    pattern: { type: 'string', minLength: 1, maxLength: SCHEMA_BOUNDS.text },
    ownerOnly: boolean,
    readOnly: boolean,
    ...inherited,
  },
} as const;

const file = {
  type: 'object',
  additionalProperties: false,
  description: 'Rules on file access.',
  properties: {
    matchPaths: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: fileMatchPath },
    matchDirectories: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: fileMatchDirectory },
    matchPatterns: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: fileMatchPattern },
    ...inherited,
  },
} as const;

/**
 * One `matchAddresses` rule: the destination of a connect or sendmsg. The CIDR is checked by the semantic
 * stage (RT3019, RT3020), which can say what is wrong with it; the schema bounds its length.
 */
const addressRule = {
  type: 'object',
  additionalProperties: false,
  required: ['cidr'],
  properties: {
    cidr: {
      type: 'string',
      minLength: 1,
      maxLength: SCHEMA_BOUNDS.cidr,
      description:
        'IPv4 or IPv6 CIDR block (169.254.169.254/32, fd00:ec2::254/128); a bare address is one host.',
    },
    ports: {
      type: 'array',
      maxItems: SCHEMA_BOUNDS.ports,
      items: { type: 'integer', minimum: 1, maximum: 65535 },
      description: 'Destination ports (tcp, udp, sctp); absent or empty: any port.',
    },
    protocol: {
      type: 'string',
      pattern: ADDRESS_PROTOCOL_PATTERN,
      description: 'tcp, udp, icmp, icmpv6 or sctp; absent: any protocol.',
    },
    fromSource,
    ...inherited,
  },
} as const;

function networkSection<R extends readonly string[]>(required: R) {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'Rules on network sockets by protocol, and on connects and sends by destination address.',
    properties: {
      matchProtocols: {
        type: 'array',
        maxItems: SCHEMA_BOUNDS.rules,
        items: {
          type: 'object',
          additionalProperties: false,
          required,
          properties: {
            protocol: { type: 'string', pattern: PROTOCOL_PATTERN, description: 'tcp, udp, icmp, raw, ...' },
            pts: boolean,
            fromSource,
            ...inherited,
          },
        },
      },
      matchAddresses: { type: 'array', maxItems: SCHEMA_BOUNDS.rules, items: addressRule },
      matchDNSQueries: {
        type: 'array',
        maxItems: SCHEMA_BOUNDS.rules,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['domain'],
          properties: {
            domain: { type: 'string', minLength: 1, maxLength: SCHEMA_BOUNDS.dnsName },
            fromSource,
            ...inherited,
          },
        },
      },
      ...inherited,
    },
  } as const;
}

function capabilitiesSection<R extends readonly string[]>(required: R) {
  return {
    type: 'object',
    additionalProperties: false,
    description: 'Rules on Linux capabilities.',
    properties: {
      matchCapabilities: {
        type: 'array',
        maxItems: SCHEMA_BOUNDS.rules,
        items: {
          type: 'object',
          additionalProperties: false,
          required,
          properties: {
            capability: {
              type: 'string',
              pattern: CAPABILITY_PATTERN,
              description: 'net_raw, sys_admin, ...',
            },
            fromSource,
            ...inherited,
          },
        },
      },
      ...inherited,
    },
  } as const;
}

const syscallList = {
  type: 'array',
  maxItems: SCHEMA_BOUNDS.syscalls,
  items: { type: 'string', enum: SYSCALL_NAMES },
} as const;

const syscalls = {
  type: 'object',
  additionalProperties: false,
  description: 'Monitored system calls.',
  properties: {
    matchSyscalls: {
      type: 'array',
      maxItems: SCHEMA_BOUNDS.rules,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['syscall'],
        properties: { syscall: syscallList, fromSource: syscallFromSource, ...inherited },
      },
    },
    matchPaths: {
      type: 'array',
      maxItems: SCHEMA_BOUNDS.rules,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['syscall', 'path'],
        properties: {
          syscall: syscallList,
          path: { type: 'string', maxLength: 200, pattern: '^\\/.*[^\\/]$|^\\/$|^\\/.*\\/$' },
          recursive: boolean,
          fromSource: syscallFromSource,
          ...inherited,
        },
      },
    },
    ...inherited,
  },
} as const;

const device = {
  type: 'object',
  additionalProperties: false,
  description: 'Rules on USB devices (host policies).',
  properties: {
    matchDevice: {
      type: 'array',
      maxItems: SCHEMA_BOUNDS.rules,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['class'],
        properties: {
          class: { type: 'string', minLength: 1, maxLength: SCHEMA_BOUNDS.dnsName },
          subClass: { type: 'integer', format: 'int32' },
          protocol: { type: 'integer', format: 'int32' },
          level: { type: 'integer', format: 'int32', minimum: 1 },
          ...inherited,
        },
      },
    },
    ...inherited,
  },
} as const;

const labelMap = {
  type: 'object',
  maxProperties: SCHEMA_BOUNDS.labels,
  additionalProperties: { type: 'string', maxLength: SCHEMA_BOUNDS.labelValue },
} as const;
const annotationMap = {
  type: 'object',
  maxProperties: SCHEMA_BOUNDS.metadataEntries,
  additionalProperties: { type: 'string', maxLength: SCHEMA_BOUNDS.annotationValue },
} as const;

const selector = {
  type: 'object',
  additionalProperties: false,
  description: 'Pods the policy applies to. matchLabels: {} selects every pod of the namespace.',
  properties: {
    matchLabels: labelMap,
    matchExpressions: {
      type: 'array',
      maxItems: SCHEMA_BOUNDS.expressions,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'operator', 'values'],
        properties: {
          key: { type: 'string', enum: ['label'] },
          operator: { type: 'string', enum: ['In', 'NotIn'] },
          values: {
            type: 'array',
            maxItems: SCHEMA_BOUNDS.expressions,
            items: { type: 'string', maxLength: SCHEMA_BOUNDS.labelExpression, pattern: '^[^=]+=.*$' },
          },
        },
      },
    },
  },
} as const;

const nodeSelector = {
  type: 'object',
  additionalProperties: false,
  description: 'Nodes the policy applies to; a value "*" matches any value of the key.',
  properties: { matchLabels: labelMap },
  required: ['matchLabels'],
} as const;

const metadata = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    labels: {
      ...annotationMap,
      additionalProperties: { type: 'string', maxLength: SCHEMA_BOUNDS.labelValue },
    },
    annotations: annotationMap,
  },
} as const;

const status = {
  type: 'object',
  properties: { status: { type: 'string' } },
} as const;

const presets = {
  type: 'array',
  maxItems: SCHEMA_BOUNDS.presets,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 64 }, action },
  },
} as const;

/** JSON Schema of a RuntimePolicy object (namespaced, selects pods). */
export const RUNTIME_POLICY_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata,
    spec: {
      type: 'object',
      additionalProperties: false,
      required: ['selector'],
      properties: {
        selector,
        process,
        file,
        network: networkSection(['protocol'] as const),
        capabilities: capabilitiesSection(['capability'] as const),
        syscalls,
        presets,
        apparmor: { type: 'string', maxLength: SCHEMA_BOUNDS.apparmor },
        ...inherited,
      },
    },
    status,
  },
} as const;

/** JSON Schema of a RuntimeHostPolicy object (cluster-scoped, selects nodes). */
export const RUNTIME_HOST_POLICY_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata,
    spec: {
      type: 'object',
      additionalProperties: false,
      required: ['nodeSelector'],
      properties: {
        nodeSelector,
        process,
        file,
        network: networkSection(['protocol', 'fromSource'] as const),
        capabilities: capabilitiesSection(['capability', 'fromSource'] as const),
        syscalls,
        device,
        apparmor: { type: 'string', maxLength: SCHEMA_BOUNDS.apparmor },
        ...inherited,
      },
    },
    status,
  },
} as const;
