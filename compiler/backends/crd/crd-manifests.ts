// The two CustomResourceDefinitions, generated from the policy schemas: names, scope, short names `rp`/`rhp`,
// printer columns and the status subresource.
import {
  API_GROUP,
  API_VERSION,
  RUNTIME_HOST_POLICY_SCHEMA,
  RUNTIME_POLICY_SCHEMA,
} from '../../schema/policy-schema.js';
import { toStructuralSchema } from './crd-schema.js';
import { POLICY_STATUS_SCHEMA, STATUS_PRINTER_COLUMNS } from './crd-status-schema.js';

interface KindNames {
  kind: string;
  plural: string;
  singular: string;
  shortName: string;
  scope: 'Namespaced' | 'Cluster';
  selectorPath: string;
  schema: object;
}

const KINDS: readonly KindNames[] = [
  {
    kind: 'RuntimePolicy',
    plural: 'runtimepolicies',
    singular: 'runtimepolicy',
    shortName: 'rp',
    scope: 'Namespaced',
    selectorPath: '.spec.selector.matchLabels',
    schema: RUNTIME_POLICY_SCHEMA,
  },
  {
    kind: 'RuntimeHostPolicy',
    plural: 'runtimehostpolicies',
    singular: 'runtimehostpolicy',
    shortName: 'rhp',
    scope: 'Cluster',
    selectorPath: '.spec.nodeSelector.matchLabels',
    schema: RUNTIME_HOST_POLICY_SCHEMA,
  },
];

/** The structural schema with the controller's status declared. */
function withStatus(schema: unknown): unknown {
  const root = schema as { properties?: Record<string, unknown> };
  return { ...root, properties: { ...root.properties, status: POLICY_STATUS_SCHEMA } };
}

/** One CRD manifest and the file name it is written to. */
export interface CrdManifest {
  fileName: string;
  object: Record<string, unknown>;
}

/** Both CRDs. */
export function createCrdManifests(): CrdManifest[] {
  return KINDS.map((k) => ({
    fileName: `${k.plural}.${API_GROUP}.yaml`,
    object: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${k.plural}.${API_GROUP}`, labels: { 'app.kubernetes.io/part-of': 'rtctl' } },
      spec: {
        group: API_GROUP,
        names: {
          kind: k.kind,
          listKind: `${k.kind}List`,
          plural: k.plural,
          singular: k.singular,
          shortNames: [k.shortName],
          categories: ['runtime-security'],
        },
        scope: k.scope,
        versions: [
          {
            name: API_VERSION,
            served: true,
            storage: true,
            subresources: { status: {} },
            additionalPrinterColumns: [
              { name: 'Action', type: 'string', jsonPath: '.spec.action' },
              ...STATUS_PRINTER_COLUMNS,
              { name: 'Selector', type: 'string', jsonPath: k.selectorPath, priority: 10 },
              { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            ],
            schema: { openAPIV3Schema: withStatus(toStructuralSchema(k.schema)) },
          },
        ],
      },
    },
  }));
}
