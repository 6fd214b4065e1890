// The table of Kubernetes kinds that carry EC2 instance-metadata options: for each kind, where its node
// settings are (JSONPath), what its fields are called, what a missing field defaults to and which fields
// force others. Data only; the evaluator in evaluate-node-settings.ts reads it, so supporting a new kind is
// one entry here. Every row names the file of the tool's own source its defaults were checked against
// (repository + path); test/fixtures/node-settings holds a fixture per default a row relies on.
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
  /** Fields whose value forces an option whatever the option's own field says. */
  implies?: readonly Implication[];
  /** True for kinds that never reach an API server (config files of CLIs): `rtctl lint` only. */
  lintOnly?: boolean;
  /** Where the field names and defaults were checked: `owner/repo path (what it says)`. */
  source: string;
}

/** `field: equals` in an options object makes `option` be `value` (eksctl: disablePodIMDS: true → tokens required). */
export interface Implication {
  field: string;
  equals: boolean | string | number;
  option: ImdsOption;
  value: string | number;
}

/**
 * EC2's own defaults (tokens optional, hop limit 1, endpoint enabled, tags disabled), for kinds that pass the
 * options through to RunInstances/CreateLaunchTemplate unset. (EC2 itself makes tokens required when the
 * AMI says ImdsSupport v2.0, or an account-level default says so; an object cannot show either, so the
 * conservative default stays.)
 */
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
// kubernetes-sigs/cluster-api-provider-aws api/v1beta2/types.go: InstanceMetadataOptions kubebuilder defaults
// and SetDefaults(): httpEndpoint enabled, httpPutResponseHopLimit 1, httpTokens optional ("Defaults to
// IMDSv1"), instanceMetadataTags disabled. Each field defaults on its own, so `{}` is all four defaults.
const CAPA_SOURCE =
  'kubernetes-sigs/cluster-api-provider-aws api/v1beta2/types.go (InstanceMetadataOptions.SetDefaults: enabled, hop limit 1, tokens optional, tags disabled)';
const UPBOUND_GROUP = 'ec2.aws.upbound.io';
// crossplane-contrib/provider-upjet-aws apis/ec2/v1beta1/zz_instance_types.go, zz_launchtemplate_types.go
// (metadataOptions a list) and apis/ec2/v1beta2/zz_instance_types.go, zz_launchtemplate_types.go,
// zz_spotinstancerequest_types.go (an object): no defaults of their own; unset fields go to EC2 unset.
function upboundSource(version: string, kind: string): string {
  return `crossplane-contrib/provider-upjet-aws apis/ec2/${version}/zz_${kind.toLowerCase()}_types.go (metadataOptions ${version === 'v1beta1' ? 'a one-item list' : 'an object'}; no defaults, EC2 decides)`;
}
const CONTRIB_GROUP = 'ec2.aws.crossplane.io';
const ACK_GROUP = 'ec2.services.k8s.aws';

/** Every kind the IMDS rules know. */
export const NODE_KINDS: readonly NodeKind[] = [
  // aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go: metadataOptions defaults to
  // {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required},
  // and each MetadataOptions field has the same kubebuilder default, so a partial object is completed alike.
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
    source:
      'aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go (MetadataOptions defaults: enabled, required, hop limit 1)',
  },
  // aws/karpenter-provider-aws pkg/apis/v1beta1/ec2nodeclass.go: the same shape with hop limit 2
  // (+kubebuilder:default=2 on HTTPPutResponseHopLimit), so a defaulted v1beta1 class lets pods in.
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
    source:
      'aws/karpenter-provider-aws pkg/apis/v1beta1/ec2nodeclass.go (MetadataOptions defaults: enabled, required, hop limit 2)',
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
      source: upboundSource('v1beta1', kind),
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
      source: upboundSource('v1beta2', kind),
    },
  ]),
  // crossplane-contrib/provider-aws apis/ec2/manualv1alpha1/instances_types.go: InstanceMetadataOptionsRequest
  // with httpEndpoint, httpPutResponseHopLimit ("Default: 1"), httpTokens ("the default state is optional");
  // no instanceMetadataTags field.
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
      'crossplane-contrib/provider-aws apis/ec2/manualv1alpha1/instances_types.go (InstanceMetadataOptionsRequest: tokens optional, hop limit 1)',
  },
  // crossplane-contrib/provider-aws apis/ec2/v1alpha1/zz_launch_template.go, zz_launch_template_version.go,
  // zz_types.go (LaunchTemplateInstanceMetadataOptionsRequest, generated from the EC2 API: EC2 defaults).
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
      'crossplane-contrib/provider-aws apis/ec2/v1alpha1/zz_types.go (LaunchTemplateInstanceMetadataOptionsRequest; EC2 defaults)',
  })),
  // aws-controllers-k8s/ec2-controller apis/v1alpha1/instance.go (spec.metadataOptions, an
  // InstanceMetadataOptionsRequest of apis/v1alpha1/types.go): generated from the EC2 API, no defaults.
  {
    group: ACK_GROUP,
    versions: ['v1alpha1'],
    kind: 'Instance',
    resource: 'instances',
    units: ['$.spec'],
    options: ['$.metadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source:
      'aws-controllers-k8s/ec2-controller apis/v1alpha1/instance.go (metadataOptions, no defaults; EC2 decides)',
  },
  // aws-controllers-k8s/ec2-controller apis/v1alpha1/launch_template.go, launch_template_version.go
  // (launchTemplateData: RequestLaunchTemplateData of apis/v1alpha1/types.go): no defaults.
  ...(['LaunchTemplate', 'LaunchTemplateVersion'] as const).map((kind): NodeKind => ({
    group: ACK_GROUP,
    versions: ['v1alpha1'],
    kind,
    resource: `${kind.toLowerCase()}s`,
    units: ['$.spec'],
    options: ['$.launchTemplateData.metadataOptions'],
    fields: EC2_FIELDS,
    defaults: EC2_DEFAULTS,
    source:
      'aws-controllers-k8s/ec2-controller apis/v1alpha1/launch_template.go (launchTemplateData.metadataOptions, no defaults)',
  })),
  // kubernetes/kops pkg/model/awsmodel/autoscalinggroup.go (buildLaunchTemplateTask): the launch template
  // starts with HTTPPutResponseHopLimit 1 and HTTPTokens required and takes spec.instanceMetadata's fields
  // over them; only clusters on Kubernetes below 1.27 fall back to optional tokens, which an InstanceGroup
  // cannot show (the version is in the Cluster object). Endpoint and tags are not configurable in kops.
  {
    group: 'kops.k8s.io',
    versions: ['v1alpha2'],
    kind: 'InstanceGroup',
    resource: 'instancegroups',
    units: ['$.spec'],
    options: ['$.instanceMetadata'],
    fields: { tokens: { field: 'httpTokens' }, hopLimit: { field: 'httpPutResponseHopLimit' } },
    defaults: {
      tokens: HttpTokens.Required,
      hopLimit: 1,
      endpoint: HttpEndpoint.Enabled,
      tags: InstanceMetadataTags.Disabled,
    },
    source:
      'kubernetes/kops pkg/model/awsmodel/autoscalinggroup.go (launch template defaults: tokens required, hop limit 1; Kubernetes < 1.27: tokens optional)',
  },
  // eksctl-io/eksctl pkg/apis/eksctl.io/v1alpha5/defaults.go (setNodeGroupBaseDefaults: disableIMDSv1 and
  // disablePodIMDS default to false) and pkg/cfn/builder/nodegroup.go (makeMetadataOptions, which
  // managed_launch_template.go calls too, so nodeGroups and managedNodeGroups alike): httpTokens required
  // when disableIMDSv1 || disablePodIMDS, hop limit 1 when disablePodIMDS, else 2.
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
    // makeMetadataOptions: tokens are required when disableIMDSv1 OR disablePodIMDS is true.
    implies: [
      { field: 'disablePodIMDS', equals: true, option: ImdsOption.Tokens, value: HttpTokens.Required },
    ],
    lintOnly: true,
    source:
      'eksctl-io/eksctl pkg/apis/eksctl.io/v1alpha5/defaults.go (both false) + pkg/cfn/builder/nodegroup.go makeMetadataOptions (disablePodIMDS: required tokens, hop limit 1)',
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
