// The /latest/meta-data tree of one instance, built from its config and effective options. A directory
// lists its entries one per line (subdirectories end in `/`); a value is text. Credential values are
// computed when read, so they rotate.
import {
  InstanceMetadataTags,
  type InstanceMetadataOptions,
} from '../compiler/instance-metadata-options/options.js';
import type { InstanceConfig } from './config.js';
import type { CredentialIssuer } from './credential-issuer.js';
import type { IdentityData } from './instance-registry.js';
import type { InstanceEvents } from './instance-events.js';

/** A directory or a value of the tree. */
export type MetadataNode = MetadataDir | MetadataValue;

/** A directory: entries by name, with an optional listing label (e.g. `0=key-name` under public-keys/). */
export interface MetadataDir {
  kind: 'dir';
  entries: ReadonlyMap<string, { node: MetadataNode; label?: string }>;
}

/** A value, computed when read. */
export interface MetadataValue {
  kind: 'value';
  read: () => string;
}

/** What the tree is built from. */
export interface MetadataSource {
  config: InstanceConfig;
  options: InstanceMetadataOptions;
  roleCredentials: CredentialIssuer;
  computeCredentials: CredentialIssuer;
  events: InstanceEvents;
}

type Spec = MetadataNode | string | string[] | undefined | null;

function value(text: string): MetadataValue {
  return { kind: 'value', read: () => text };
}

function computed(read: () => string): MetadataValue {
  return { kind: 'value', read };
}

function toNode(spec: Spec): MetadataNode | undefined {
  if (spec === undefined || spec === null) return undefined;
  if (typeof spec === 'string') return value(spec);
  if (Array.isArray(spec)) return value(spec.join('\n'));
  return spec;
}

/** Builds a directory; entries whose spec is null/undefined are left out (absent on this instance). */
function dir(spec: Record<string, Spec>): MetadataDir {
  const entries = new Map<string, { node: MetadataNode }>();
  for (const [name, s] of Object.entries(spec)) {
    const node = toNode(s);
    if (node !== undefined) entries.set(name, { node });
  }
  return { kind: 'dir', entries };
}

function formatJson(v: unknown): string {
  return JSON.stringify(v, null, 2);
}

function buildPublicKeys(config: InstanceConfig): MetadataDir | undefined {
  if (config.publicKeys.length === 0) return undefined;
  const entries = new Map<string, { node: MetadataNode; label?: string }>();
  config.publicKeys.forEach((key, i) => {
    entries.set(String(i), { node: dir({ 'openssh-key': key.openssh }), label: `${i}=${key.name}` });
  });
  return { kind: 'dir', entries };
}

function buildIam(source: MetadataSource): MetadataDir | undefined {
  const role = source.config.role;
  if (role === null) return undefined;
  return dir({
    info: computed(() =>
      formatJson({
        Code: 'Success',
        LastUpdated: source.roleCredentials.current().LastUpdated,
        InstanceProfileArn: role.instanceProfileArn,
        InstanceProfileId: role.instanceProfileId,
      }),
    ),
    'security-credentials': dir({
      [role.name]: computed(() => formatJson(source.roleCredentials.current())),
    }),
  });
}

function buildNetwork(config: InstanceConfig): MetadataDir {
  const n = config.network;
  const mac = dir({
    'device-number': String(n.deviceNumber),
    'interface-id': n.interfaceId,
    'ipv4-associations': config.publicIpv4 === null ? null : dir({ [config.publicIpv4]: config.localIpv4 }),
    'local-hostname': config.localHostname,
    'local-ipv4s': config.localIpv4,
    mac: config.mac,
    'owner-id': config.accountId,
    'public-hostname': config.publicHostname,
    'public-ipv4s': config.publicIpv4,
    'security-group-ids': config.securityGroupIds,
    'security-groups': config.securityGroups,
    'subnet-id': n.subnetId,
    'subnet-ipv4-cidr-block': n.subnetIpv4CidrBlock,
    'vpc-id': n.vpcId,
    'vpc-ipv4-cidr-block': n.vpcIpv4CidrBlock,
    'vpc-ipv4-cidr-blocks': n.vpcIpv4CidrBlock,
  });
  return dir({ interfaces: dir({ macs: dir({ [config.mac]: mac }) }) });
}

/** events/: maintenance (always) and recommendations/rebalance (once a recommendation was issued). */
function buildEvents(events: InstanceEvents): MetadataDir {
  const rebalance = events.rebalance();
  return dir({
    maintenance: dir({ history: formatJson(events.history()), scheduled: formatJson(events.scheduled()) }),
    recommendations: rebalance === undefined ? null : dir({ rebalance: formatJson(rebalance) }),
  });
}

/** spot/: present once an interruption notice was issued; termination-time only when the action is terminate. */
function buildSpot(events: InstanceEvents): MetadataDir | undefined {
  const action = events.spotAction();
  if (action === undefined) return undefined;
  return dir({
    'instance-action': formatJson(action),
    'termination-time': action.action === 'terminate' ? action.time : null,
  });
}

/** Builds the tree served under /latest/dynamic. */
export function buildDynamicTree(identity: () => IdentityData): MetadataDir {
  return dir({
    'instance-identity': dir({
      document: computed(() => identity().document),
      pkcs7: computed(() => identity().pkcs7),
      rsa2048: computed(() => identity().pkcs7),
      signature: computed(() => identity().signature),
    }),
  });
}

/** Builds the tree served under /latest/meta-data. */
export function buildMetadataTree(source: MetadataSource): MetadataDir {
  const c = source.config;
  const tagsEnabled = source.options.InstanceMetadataTags === InstanceMetadataTags.Enabled;
  const asgState = source.events.autoscalingTargetState();
  return dir({
    'image-id': c.imageId,
    'image-launch-index': String(c.imageLaunchIndex),
    'image-manifest-path': c.imageManifestPath,
    autoscaling: asgState === null ? null : dir({ 'target-lifecycle-state': asgState }),
    'block-device-mapping': dir(c.blockDeviceMapping),
    events: buildEvents(source.events),
    hostname: c.hostname,
    iam: buildIam(source),
    'identity-credentials': dir({
      compute: dir({
        'security-credentials': dir({
          'compute-instance': computed(() => formatJson(source.computeCredentials.current())),
        }),
      }),
    }),
    'instance-action': c.instanceAction,
    'instance-id': c.instanceId,
    'instance-life-cycle': c.instanceLifeCycle,
    'instance-type': c.instanceType,
    'local-hostname': c.localHostname,
    'local-ipv4': c.localIpv4,
    mac: c.mac,
    metrics: dir({ vhostmd: '<?xml version="1.0" encoding="UTF-8"?>' }),
    network: buildNetwork(c),
    placement: dir({
      'availability-zone': c.placement.availabilityZone,
      'availability-zone-id': c.placement.availabilityZoneId,
      region: c.placement.region,
    }),
    profile: c.profile,
    'public-hostname': c.publicHostname,
    'public-ipv4': c.publicIpv4,
    'public-keys': buildPublicKeys(c),
    'reservation-id': c.reservationId,
    'security-groups': c.securityGroups,
    spot: buildSpot(source.events),
    services: dir({ domain: c.services.domain, partition: c.services.partition }),
    tags: tagsEnabled ? dir({ instance: dir(c.tags) }) : null,
  });
}

/** Finds the node at `segments` (already split on `/`, empty trailing segment removed). */
export function resolveMetadataPath(
  root: MetadataDir,
  segments: readonly string[],
): MetadataNode | undefined {
  let node: MetadataNode = root;
  for (const segment of segments) {
    if (node.kind !== 'dir') return undefined;
    const next = node.entries.get(segment);
    if (next === undefined) return undefined;
    node = next.node;
  }
  return node;
}

/** The text body of a node: a directory's sorted listing, or a value. */
export function renderMetadataNode(node: MetadataNode): string {
  if (node.kind === 'value') return node.read();
  const names = [...node.entries.entries()].map(
    ([name, e]) => e.label ?? (e.node.kind === 'dir' ? `${name}/` : name),
  );
  return names.sort().join('\n');
}
