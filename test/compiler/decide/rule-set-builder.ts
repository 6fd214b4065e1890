// Test helper: compact builders for hand-made RuleSets (the IR of compiler/ir/rule-set.ts).
import {
  Action,
  Operation,
  PolicyKind,
  type Matcher,
  type PolicyIR,
  type Rule,
  type SourceMatcher,
  type LabelExpression,
} from '../../../compiler/ir/rule-set.js';

/** Fields of a rule a test usually cares about; the rest get defaults. */
export interface RuleSpec {
  operation?: Operation;
  matcher: Matcher;
  action: Action;
  fromSource?: SourceMatcher[];
  readOnly?: boolean;
  ownerOnly?: boolean;
  severity?: number;
  tags?: string[];
  message?: string;
  allowedArgs?: string[];
  pts?: boolean;
  line?: number;
}

let nextLine = 1;

/** Operation class implied by a matcher, when the spec does not name one. */
function inferOperation(m: Matcher): Operation {
  if (m.kind === 'protocol' || m.kind === 'address') return Operation.Network;
  if (m.kind === 'capability') return Operation.Capabilities;
  if (m.kind === 'execname') return Operation.Process;
  return Operation.File;
}

/** A rule with defaults for everything not given. */
export function makeRule(spec: RuleSpec, file = 'test.yaml'): Rule {
  const line = spec.line ?? nextLine++;
  return {
    operation: spec.operation ?? inferOperation(spec.matcher),
    matcher: spec.matcher,
    fromSource: spec.fromSource ?? [],
    readOnly: spec.readOnly ?? false,
    ownerOnly: spec.ownerOnly ?? false,
    action: spec.action,
    severity: spec.severity ?? 1,
    tags: spec.tags ?? [],
    message: spec.message ?? '',
    allowedArgs: spec.allowedArgs ?? [],
    pts: spec.pts ?? false,
    location: { file, line, column: 3, pointer: `/spec/rule/${line}` },
  };
}

/** A pod policy in `namespace` selecting `labels`. */
export function makePodPolicy(
  name: string,
  rules: RuleSpec[],
  options: { namespace?: string; labels?: Record<string, string>; expressions?: LabelExpression[] } = {},
): PolicyIR {
  const namespace = options.namespace ?? 'default';
  const file = `${name}.yaml`;
  return {
    kind: PolicyKind.RuntimePolicy,
    name,
    namespace,
    target: {
      kind: 'pods',
      namespace,
      matchLabels: options.labels ?? { app: 'web' },
      matchExpressions: options.expressions ?? [],
    },
    rules: rules.map((r) => makeRule(r, file)),
    syscallRules: [],
    presets: [],
    dnsQueryRules: [],
    deviceRules: [],
    apparmor: '',
    location: { file, line: 1, column: 1, pointer: '' },
  };
}

/** A host policy selecting nodes by labels. */
export function makeHostPolicy(
  name: string,
  rules: RuleSpec[],
  nodeLabels: Record<string, string> = {},
): PolicyIR {
  const file = `${name}.yaml`;
  return {
    kind: PolicyKind.RuntimeHostPolicy,
    name,
    namespace: '',
    target: { kind: 'host', nodeLabels },
    rules: rules.map((r) => makeRule(r, file)),
    syscallRules: [],
    presets: [],
    dnsQueryRules: [],
    deviceRules: [],
    apparmor: '',
    location: { file, line: 1, column: 1, pointer: '' },
  };
}

export const path = (p: string): Matcher => ({ kind: 'path', path: p });
export const dir = (d: string, recursive = false): Matcher => ({ kind: 'directory', dir: d, recursive });
export const pattern = (p: string): Matcher => ({ kind: 'pattern', pattern: p });
export const execname = (n: string): Matcher => ({ kind: 'execname', name: n });
export const protocol = (p: string): Matcher => ({ kind: 'protocol', protocol: p });
export const capability = (c: string): Matcher => ({ kind: 'capability', capability: c });
/** An address matcher from a canonical CIDR (`10.0.0.0/8`), with optional ports and protocol. */
export const address = (cidr: string, ports: number[] = [], protocol = ''): Matcher => ({
  kind: 'address',
  cidr,
  prefix: Number(cidr.slice(cidr.indexOf('/') + 1)),
  ports,
  protocol,
});
export const srcPath = (p: string): SourceMatcher => ({ kind: 'path', path: p });
export const srcDir = (d: string, recursive = false): SourceMatcher => ({
  kind: 'directory',
  dir: d,
  recursive,
});
export { Action, Operation };
