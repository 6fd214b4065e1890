// The table of Kubernetes kinds that carry EC2 instance-metadata options: for each kind, where its node
// settings are (JSONPath), what its fields are called and what a missing field defaults to. Data only; the
// evaluator in evaluate-node-settings.ts reads it, so supporting a new kind is one entry here.
import {
  HttpEndpoint,
  HttpTokens,
  InstanceMetadataTags,
  DEFAULT_OPTIONS,
} from '../instance-metadata-options/options.js';

/** The four options the IMDS rules look at. */
export const ImdsOption = {
  Tokens: 'tokens',
  HopLimit: 'hopLimit',
  Endpoint: 'endpoint',
  Tags: 'tags',
} as const;
export type ImdsOption = (typeof ImdsOption)[keyof typeof ImdsOption];

/** The value of each option in the vocabulary of compiler/instance-metadata-options/options.ts. */
export interface ImdsValues {
  tokens: HttpTokens;
  hopLimit: number;
  endpoint: HttpEndpoint;
  tags: InstanceMetadataTags;
}

/**
 * How one option is spelled in a kind. A plain field holds the vocabulary value itself; a mapped field
 * (eksctl's booleans) holds a value translated through `map` (pairs of field value → vocabulary value).
 */
export interface FieldSpec {
  field: string;
  map?: ReadonlyArray<readonly [boolean | string | number, string | number]>;
}

/** One kind (at some API versions) whose objects configure instance metadata options. */
export interface NodeKind {
  /** API group (`karpenter.k8s.aws`). */
  group: string;
  /** The versions this entry describes; other versions of the kind are not checked. */
  versions: readonly string[];
  kind: string;
  /** Plural resource name, for the webhook's rules. */
  resource: string;
  /** JSONPaths (from the object root) selecting each unit of node settings: usually `$.spec`. */
  units: readonly string[];
  /** JSONPaths (from a unit) of the option objects, highest precedence first; a field set in an earlier one wins. */
  options: readonly string[];
  /** The field of each option; an option absent here is not configurable in this kind and takes the default. */
  fields: Partial<Record<ImdsOption, FieldSpec>>;
  /** What each option is when its field is missing. */
  defaults: ImdsValues;
  /** True for kinds that never reach an API server (config files of CLIs): `rtctl lint` only. */
  lintOnly?: boolean;
  /** Where the field names and defaults were checked. */
  source: string;
}

/** EC2's own defaults (tokens optional, hop limit 1, endpoint enabled, tags disabled). */
const EC2_DEFAULTS: ImdsValues = {
  tokens: DEFAULT_OPTIONS.HttpTokens,
  hopLimit: DEFAULT_OPTIONS.HttpPutResponseHopLimit,
  endpoint: DEFAULT_OPTIONS.HttpEndpoint,
  tags: DEFAULT_OPTIONS.InstanceMetadataTags,
};

/** The EC2 API field names in lower camel case, used by most AWS-shaped kinds. */
const EC2_FIELDS: NodeKind['fields'] = {
  tokens: { field: 'httpTokens' },
  hopLimit: { field: 'httpPutResponseHopLimit' },
  endpoint: { field: 'httpEndpoint' },
  tags: { field: 'instanceMetadataTags' },
};

const EC2_FIELDS_NO_TAGS: NodeKind['fields'] = {
  tokens: { field: 'httpTokens' },
  hopLimit: { field: 'httpPutResponseHopLimit' },
  endpoint: { field: 'httpEndpoint' },
};

const CAPA_GROUP = 'infrastructure.cluster.x-k8s.io';
const CAPA_VERSIONS = ['v1beta1', 'v1beta2'] as const;
const CAPA_SOURCE =
  'cluster-api-provider-aws InstanceMetadataOptions (kubebuilder defaults: httpTokens optional, hop limit 1, tags disabled)';
const UPBOUND_GROUP = 'ec2.aws.upbound.io';
const UPBOUND_SOURCE =
  'provider-upjet-aws ec2 CRDs: metadataOptions is a one-item list in v1beta1, an object in v1beta2; EC2 defaults';
const CONTRIB_GROUP = 'ec2.aws.crossplane.io';
const ACK_GROUP = 'ec2.services.k8s.aws';

/** Every kind the IMDS rules know. */
export const NODE_KINDS: readonly NodeKind[] = [
  {
    group: 'karpenter.k8s.aws',
    versions: ['v1'],
    kind: 'EC2NodeClass',
    resource: 'ec2nodeclasses',
    units: ['$.spec'],
    options: ['$.metadataOptions'],
    fields: EC2_FIELDS_NO_TAGS,
    defaults: {
      tokens: HttpTokens.Required,
      hopLimit: 1,
      endpoint: HttpEndpoint.Enabled,
      tags: InstanceMetadataTags.Disabled,
    },
    source: 'Karpenter v1 EC2NodeClass spec.metadataOptions (defaults: enabled, required, hop limit 1)',
  },
  {
    group: 'karpenter.k8s.aws',
    versions: ['v1beta1'],
    kind: 'EC2NodeClass',
    resource: 'ec2nodeclasses',
    units: ['$.spec'],
    options: ['$.metadataOptions'],
    fields: EC2_FIELDS_NO_TAGS,
    defaults: {
      tokens: HttpTokens.Required,
      hopLimit: 2,
      endpoint: HttpEndpoint.Enabled,
      tags: InstanceMetadataTags.Disabled,
    },
    source: 'Karpenter v1beta1 EC2NodeClass spec.metadataOptions (defaults: enabled, required, hop limit 2)',
  },
  {
    group: CAPA_GROUP,
    versions: CAPA_VERSIONS,
    kind: 'AWSMachine',
    resource: 'awsmachines',
    units: ['$.spec'],
    options: ['$.instanceMetadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: CAPA_SOURCE,
  },
  {
    group: CAPA_GROUP,
    versions: CAPA_VERSIONS,
    kind: 'AWSMachineTemplate',
    resource: 'awsmachinetemplates',
    units: ['$.spec.template.spec'],
    options: ['$.instanceMetadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: CAPA_SOURCE,
  },
  {
    group: CAPA_GROUP,
    versions: CAPA_VERSIONS,
    kind: 'AWSMachinePool',
    resource: 'awsmachinepools',
    units: ['$.spec.awsLaunchTemplate'],
    options: ['$.instanceMetadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: CAPA_SOURCE,
  },
  {
    group: CAPA_GROUP,
    versions: CAPA_VERSIONS,
    kind: 'AWSManagedMachinePool',
    resource: 'awsmanagedmachinepools',
    units: ['$.spec.awsLaunchTemplate'],
    options: ['$.instanceMetadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: CAPA_SOURCE,
  },
  ...(['Instance', 'LaunchTemplate', 'SpotInstanceRequest'] as const).flatMap((kind): NodeKind[] => [
    {
      group: UPBOUND_GROUP,
      versions: ['v1beta1'],
      kind,
      resource: `${kind.toLowerCase()}s`,
      units: ['$.spec'],
      options: ['$.forProvider.metadataOptions[*]', '$.initProvider.metadataOptions[*]'],
      fields: EC2_FIELDS,
      defaults: EC2_DEFAULTS,
      source: UPBOUND_SOURCE,
    },
    {
      group: UPBOUND_GROUP,
      versions: ['v1beta2'],
      kind,
      resource: `${kind.toLowerCase()}s`,
      units: ['$.spec'],
      options: ['$.forProvider.metadataOptions', '$.initProvider.metadataOptions'],
      fields: EC2_FIELDS,
      defaults: EC2_DEFAULTS,
      source: UPBOUND_SOURCE,
    },
  ]),
  {
    group: CONTRIB_GROUP,
    versions: ['v1alpha1'],
    kind: 'Instance',
    resource: 'instances',
    units: ['$.spec'],
    options: ['$.forProvider.metadataOptions'],
    fields: EC2_FIELDS_NO_TAGS,
    defaults: EC2_DEFAULTS,
    source:
      'crossplane-contrib provider-aws ec2 Instance forProvider.metadataOptions (InstanceMetadataOptionsRequest)',
  },
  ...(['LaunchTemplate', 'LaunchTemplateVersion'] as const).map((kind): NodeKind => ({
    group: CONTRIB_GROUP,
    versions: ['v1alpha1'],
    kind,
    resource: `${kind.toLowerCase()}s`,
    units: ['$.spec'],
    options: ['$.forProvider.launchTemplateData.metadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source:
      'crossplane-contrib provider-aws ec2 launchTemplateData.metadataOptions (LaunchTemplateInstanceMetadataOptionsRequest)',
  })),
  {
    group: ACK_GROUP,
    versions: ['v1alpha1'],
    kind: 'Instance',
    resource: 'instances',
    units: ['$.spec'],
    options: ['$.metadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: 'ACK ec2-controller Instance spec.metadataOptions',
  },
  ...(['LaunchTemplate', 'LaunchTemplateVersion'] as const).map((kind): NodeKind => ({
    group: ACK_GROUP,
    versions: ['v1alpha1'],
    kind,
    resource: `${kind.toLowerCase()}s`,
    units: ['$.spec'],
    options: ['$.launchTemplateData.metadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source: 'ACK ec2-controller spec.launchTemplateData (RequestLaunchTemplateData) metadataOptions',
  })),
  {
    group: 'kops.k8s.io',
    versions: ['v1alpha2'],
    kind: 'InstanceGroup',
    resource: 'instancegroups',
    units: ['$.spec'],
    options: ['$.instanceMetadata'],
    fields: { tokens: { field: 'httpTokens' }, hopLimit: { field: 'httpPutResponseHopLimit' } },
    defaults: EC2_DEFAULTS,
    source:
      'kops InstanceGroupSpec.instanceMetadata (InstanceMetadataOptions: httpPutResponseHopLimit, httpTokens)',
  },
  {
    group: 'eksctl.io',
    versions: ['v1alpha5'],
    kind: 'ClusterConfig',
    resource: 'clusterconfigs',
    units: ['$.nodeGroups[*]', '$.managedNodeGroups[*]'],
    options: ['$'],
    fields: {
      tokens: {
        field: 'disableIMDSv1',
        map: [
          [true, HttpTokens.Required],
          [false, HttpTokens.Optional],
        ],
      },
      hopLimit: {
        field: 'disablePodIMDS',
        map: [
          [true, 1],
          [false, 2],
        ],
      },
    },
    // eksctl node groups keep IMDSv1 unless disableIMDSv1 is set, and pods reach IMDS unless disablePodIMDS is set.
    defaults: {
      tokens: HttpTokens.Optional,
      hopLimit: 2,
      endpoint: HttpEndpoint.Enabled,
      tags: InstanceMetadataTags.Disabled,
    },
    lintOnly: true,
    source: 'eksctl ClusterConfig nodeGroups[]/managedNodeGroups[] disableIMDSv1, disablePodIMDS',
  },
];

/** The entry for an object's apiVersion and kind, if the IMDS rules know it. */
export function findNodeKind(apiVersion: string, kind: string): NodeKind | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  return NODE_KINDS.find((k) => k.group === group && k.kind === kind && k.versions.includes(version));
}
