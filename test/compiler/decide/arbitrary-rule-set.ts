// Test helper: fast-check arbitraries for rule sets, workloads and operations over a small universe of
// names, so that random rules and random operations actually meet.
import fc from 'fast-check';
import '../../support/property-seed.js';
import type { OperationRequest, Postures, Workload } from '../../../compiler/decide/decision-input.js';
import {
  EnforcementLevel,
  isKindCarried,
  type EnforcementTarget,
} from '../../../compiler/enforcement/enforcement-table.js';
import { listRuleForms, listSyscallRuleForms } from '../../../compiler/enforcement/rule-forms.js';
import { assessRule } from '../../../compiler/enforcement/summarize-enforcement.js';
import {
  Action,
  Operation,
  PolicyKind,
  type Matcher,
  type PolicyIR,
  type Rule,
  type RuleSet,
  type SourceMatcher,
} from '../../../compiler/ir/rule-set.js';

const SEGMENTS = ['a', 'b', 'etc', 'x y', 'é', 'sh', 'c,d'];
const EXECUTABLES = ['/bin/sh', '/usr/bin/curl', '/usr/local/bin/tool', '/a/b/sh', '/bin/a'];
const PROTOCOLS = ['tcp', 'udp', 'icmp', 'raw', 'all'];
const CAPABILITIES = ['net_raw', 'sys_admin', 'chown'];
const ARGS = ['-V', '-c', 'x'];
const CIDRS: [string, number][] = [
  ['10.0.0.0/8', 8],
  ['10.1.0.0/16', 16],
  ['10.1.2.3/32', 32],
  ['169.254.169.254/32', 32],
  ['0.0.0.0/0', 0],
  ['fd00::/8', 8],
  ['fd00:ec2::254/128', 128],
  ['::/0', 0],
];
const ADDRESSES = [
  '10.1.2.3',
  '10.2.0.1',
  '169.254.169.254',
  '8.8.8.8',
  'fd00:ec2::254',
  'fd00::1',
  '::ffff:10.1.2.3',
  '2001:db8::1',
];
const PORTS = [80, 443, 53];

const segment = fc.constantFrom(...SEGMENTS);
export const arbPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
export const arbDir = fc
  .array(segment, { minLength: 0, maxLength: 3 })
  .map((s) => (s.length === 0 ? '/' : `/${s.join('/')}/`));
const globPiece = fc.oneof(segment, fc.constantFrom('*', '**', '?', 'e*', '*h', 'a?'));
export const arbPattern = fc.array(globPiece, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);

const arbSource: fc.Arbitrary<SourceMatcher> = fc.oneof(
  fc.constantFrom(...EXECUTABLES).map((p): SourceMatcher => ({ kind: 'path', path: p })),
  fc
    .record({ dir: fc.constantFrom('/bin/', '/usr/', '/usr/bin/', '/a/'), recursive: fc.boolean() })
    .map((d): SourceMatcher => ({ kind: 'directory', ...d })),
);

const arbPathMatcher: fc.Arbitrary<Matcher> = fc.oneof(
  arbPath.map((p): Matcher => ({ kind: 'path', path: p })),
  fc.record({ dir: arbDir, recursive: fc.boolean() }).map((d): Matcher => ({ kind: 'directory', ...d })),
  arbPattern.map((p): Matcher => ({ kind: 'pattern', pattern: p })),
  segment.map((n): Matcher => ({ kind: 'execname', name: n })),
);

const arbProtocolMatcher = fc
  .constantFrom(...PROTOCOLS)
  .map((p): Matcher => ({ kind: 'protocol', protocol: p }));

/** Address rules are generated only by the `withAddresses` arbitraries, so that the others keep their stream. */
const arbMatcherFor = (op: Operation, withAddresses: boolean): fc.Arbitrary<Matcher> => {
  if (op === Operation.Network && !withAddresses) return arbProtocolMatcher;
  if (op === Operation.Network)
    return fc.oneof(
      arbProtocolMatcher,
      fc
        .record({
          cidr: fc.constantFrom(...CIDRS),
          ports: fc.subarray(PORTS),
          protocol: fc.constantFrom('', 'tcp', 'udp'),
        })
        .map((a): Matcher => ({
          kind: 'address',
          cidr: a.cidr[0],
          prefix: a.cidr[1],
          ports: [...a.ports].sort((x, y) => x - y),
          protocol: a.protocol,
        })),
    );
  if (op === Operation.Capabilities) {
    return fc.constantFrom(...CAPABILITIES).map((c): Matcher => ({ kind: 'capability', capability: c }));
  }
  return arbPathMatcher;
};

const arbOperationClass = fc.constantFrom(
  Operation.Process,
  Operation.File,
  Operation.Network,
  Operation.Capabilities,
);
const arbAction = fc.constantFrom(Action.Allow, Action.Audit, Action.Block);

const arbRule = (file: string, withAddresses: boolean): fc.Arbitrary<Rule> =>
  arbOperationClass.chain((operation) =>
    fc
      .record({
        matcher: arbMatcherFor(operation, withAddresses),
        fromSource: fc.oneof(
          { weight: 3, arbitrary: fc.constant<SourceMatcher[]>([]) },
          { weight: 1, arbitrary: fc.array(arbSource, { minLength: 1, maxLength: 2 }) },
        ),
        readOnly: fc.boolean(),
        ownerOnly: fc.boolean(),
        action: arbAction,
        severity: fc.integer({ min: 1, max: 10 }),
        tags: fc.array(fc.constantFrom('CIS', 'NIST', 'MITRE'), { maxLength: 2 }),
        message: fc.constantFrom('', 'msg', 'blocked, "quoted"'),
        allowedArgs: fc.oneof(
          { weight: 4, arbitrary: fc.constant<string[]>([]) },
          { weight: 1, arbitrary: fc.array(fc.constantFrom(...ARGS), { minLength: 1, maxLength: 2 }) },
        ),
        pts: fc.boolean(),
        line: fc.integer({ min: 1, max: 200 }),
      })
      .map((r): Rule => ({
        operation,
        matcher: r.matcher,
        fromSource: r.fromSource,
        // The schema has no readOnly or ownerOnly on network rules.
        readOnly: operation === Operation.Network ? false : r.readOnly,
        ownerOnly: operation === Operation.Network ? false : r.ownerOnly,
        action: r.action,
        severity: r.severity,
        tags: r.tags,
        message: r.message,
        allowedArgs: operation === Operation.Process ? r.allowedArgs : [],
        pts: r.pts,
        location: { file, line: r.line, column: 3, pointer: `/spec/x/${r.line}` },
      })),
  );

const arbPolicy = (index: number, withAddresses: boolean): fc.Arbitrary<PolicyIR> => {
  const file = `p${index}.yaml`;
  return fc
    .record({
      host: fc.boolean(),
      name: fc.constantFrom('alpha', 'beta', 'gamma', `p${index}`),
      namespace: fc.constantFrom('default', 'other'),
      app: fc.constantFrom('web', 'db', undefined),
      expr: fc.constantFrom('none', 'in', 'notin'),
      zone: fc.constantFrom('a', '*', undefined),
      rules: fc.array(arbRule(file, withAddresses), { minLength: 1, maxLength: 6 }),
    })
    .map((p): PolicyIR => {
      const base = {
        syscallRules: [],
        presets: [],
        dnsQueryRules: [],
        deviceRules: [],
        apparmor: '',
        location: { file, line: 1, column: 1, pointer: '' },
        rules: p.rules,
        name: p.name,
      };
      if (p.host) {
        return {
          ...base,
          kind: PolicyKind.RuntimeHostPolicy,
          namespace: '',
          target: { kind: 'host', nodeLabels: p.zone === undefined ? {} : { zone: p.zone } },
        };
      }
      return {
        ...base,
        kind: PolicyKind.RuntimePolicy,
        namespace: p.namespace,
        target: {
          kind: 'pods',
          namespace: p.namespace,
          matchLabels: p.app === undefined ? {} : { app: p.app },
          matchExpressions:
            p.expr === 'none'
              ? []
              : [{ operator: p.expr === 'in' ? 'In' : 'NotIn', values: ['tier=front', 'app=db'] }],
        },
      };
    });
};

/**
 * The part of a rule set a target enforces, by the enforcement table (compiler/enforcement): the policies of
 * the kinds it carries, with the rules all of whose forms it enforces. A differential test compares a plane or
 * backend with the oracle on this part. `handled` lists forms the test accounts for itself (by leaving out
 * the decisions that depend on them), whose rules are kept.
 */
export function restrictToTarget(
  ruleSet: RuleSet,
  target: EnforcementTarget,
  handled: readonly string[] = [],
): RuleSet {
  const enforced = (forms: readonly string[], policy: PolicyIR): boolean =>
    assessRule(
      forms.filter((f) => !handled.includes(f)),
      target,
      policy.kind,
    ).level === EnforcementLevel.Enforced;
  return {
    policies: ruleSet.policies
      .filter((p) => isKindCarried(target, p.kind))
      .map((p) => ({
        ...p,
        rules: p.rules.filter((r) => enforced(listRuleForms(r), p)),
        syscallRules: p.syscallRules.filter((r) => enforced(listSyscallRuleForms(r), p)),
        presets: p.presets.filter(() => enforced(['presets'], p)),
        dnsQueryRules: p.dnsQueryRules.filter(() => enforced(['network.matchDNSQueries'], p)),
        deviceRules: p.deviceRules.filter(() => enforced(['device.matchDevice'], p)),
      })),
  };
}

const arbRuleSetWith = (withAddresses: boolean): fc.Arbitrary<RuleSet> =>
  fc
    .integer({ min: 1, max: 5 })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbPolicy(i, withAddresses))))
    .map((policies) => ({ policies }));

/** A random rule set of 1 to 5 policies (network rules by protocol only). */
export const arbRuleSet: fc.Arbitrary<RuleSet> = arbRuleSetWith(false);
/** A random rule set of 1 to 5 policies whose network rules include address rules. */
export const arbAddressRuleSet: fc.Arbitrary<RuleSet> = arbRuleSetWith(true);

/** A random workload (container or host). */
export const arbWorkload: fc.Arbitrary<Workload> = fc.oneof(
  fc
    .record({
      namespace: fc.constantFrom('default', 'other'),
      app: fc.constantFrom('web', 'db'),
      tier: fc.constantFrom('front', 'back'),
    })
    .map((w): Workload => ({
      kind: 'container',
      namespace: w.namespace,
      labels: { app: w.app, tier: w.tier },
      nodeLabels: {},
    })),
  fc
    .constantFrom({}, { zone: 'a' }, { zone: 'b' })
    .map((nodeLabels): Workload => ({ kind: 'host', namespace: '', labels: {}, nodeLabels })),
);

const arbResourceFor = (op: Operation): fc.Arbitrary<string> => {
  if (op === Operation.Network) return fc.constantFrom('tcp', 'udp', 'icmp', 'raw', 'TCP');
  if (op === Operation.Capabilities) return fc.constantFrom('net_raw', 'CAP_SYS_ADMIN', 'chown');
  return fc.oneof(arbPath, fc.constantFrom(...EXECUTABLES));
};

/** A random operation. */
export const arbOperation: fc.Arbitrary<OperationRequest> = arbOperationClass.chain((operation) =>
  fc
    .record({
      resource: arbResourceFor(operation),
      executable: fc.option(fc.constantFrom(...EXECUTABLES), { nil: undefined }),
      parentExecutable: fc.option(fc.constantFrom(...EXECUTABLES), { nil: undefined }),
      write: fc.boolean(),
      owner: fc.boolean(),
      tty: fc.boolean(),
      args: fc.option(fc.array(fc.constantFrom(...ARGS), { maxLength: 2 }), { nil: undefined }),
    })
    .map((o): OperationRequest => {
      const req: OperationRequest = {
        operation,
        resource: o.resource,
        write: o.write,
        owner: o.owner,
        tty: o.tty,
      };
      if (o.executable !== undefined) req.executable = o.executable;
      if (o.parentExecutable !== undefined) req.parentExecutable = o.parentExecutable;
      if (o.args !== undefined) req.args = o.args;
      return req;
    }),
);

/** Random postures. */
export const arbPostures: fc.Arbitrary<Postures> = fc.record({
  file: fc.constantFrom('audit', 'block'),
  network: fc.constantFrom('audit', 'block'),
  capabilities: fc.constantFrom('audit', 'block'),
} as const);

/** A resource close to one a matcher names, so that random operations hit random rules. */
function arbResourceNear(m: Matcher): fc.Arbitrary<string> {
  switch (m.kind) {
    case 'path':
      return fc.constant(m.path);
    case 'execname':
      return fc.constantFrom(`/bin/${m.name}`, `/a/${m.name}`);
    case 'directory':
      return fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `${m.dir}${s.join('/')}`);
    case 'pattern':
      return fc
        .tuple(segment, segment)
        .map(([x, y]) => m.pattern.replace(/\*\*/g, `${x}/${y}`).replace(/\*/g, x).replace(/\?/g, 'e'));
    case 'protocol':
      return fc.constant(m.protocol === 'all' ? 'udp' : m.protocol);
    case 'capability':
      return fc.constant(m.capability);
    case 'address':
      return fc.constantFrom(m.protocol === '' ? 'tcp' : m.protocol, 'udp');
  }
}

/** A workload some policy of the rule set selects (or a random one). */
function arbWorkloadFor(ruleSet: RuleSet): fc.Arbitrary<Workload> {
  const selected = ruleSet.policies.map((p): Workload => {
    if (p.target.kind === 'host') {
      const zone = p.target.nodeLabels['zone'];
      return {
        kind: 'host',
        namespace: '',
        labels: {},
        nodeLabels: zone === undefined ? {} : { zone: zone === '*' ? 'b' : zone },
      };
    }
    return {
      kind: 'container',
      namespace: p.target.namespace,
      labels: { tier: 'back', ...p.target.matchLabels },
      nodeLabels: {},
    };
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...selected) },
    { weight: 1, arbitrary: arbWorkload },
  );
}

/** A random operation; Network ones are connects or sends to a random destination half of the time. */
export const arbOperationWithDestination: fc.Arbitrary<OperationRequest> = arbOperation.chain((op) =>
  op.operation !== Operation.Network
    ? fc.constant(op)
    : fc
        .option(fc.record({ address: fc.constantFrom(...ADDRESSES), port: fc.constantFrom(...PORTS) }), {
          nil: undefined,
        })
        .map((d) => (d === undefined ? op : { ...op, ...d })),
);

/** An operation that targets one of the rule set's rules (or a random one). */
function arbOperationFor(ruleSet: RuleSet, withAddresses: boolean): fc.Arbitrary<OperationRequest> {
  const rules = ruleSet.policies.flatMap((p) => p.rules);
  const random = withAddresses ? arbOperationWithDestination : arbOperation;
  if (rules.length === 0) return random;
  const near = fc.constantFrom(...rules).chain((rule) =>
    fc
      .tuple(random, arbResourceNear(rule.matcher), fc.constantFrom(...EXECUTABLES))
      .map(([op, resource, actor]) => {
        const source = rule.fromSource[0];
        const sourced =
          source === undefined ? actor : source.kind === 'path' ? source.path : `${source.dir}sh`;
        const req: OperationRequest = { ...op, operation: rule.operation, resource };
        if (rule.matcher.kind === 'address') {
          req.address = rule.matcher.cidr.slice(0, rule.matcher.cidr.indexOf('/'));
          req.port = rule.matcher.ports[0] ?? 80;
        } else if (rule.operation !== Operation.Network) {
          delete req.address;
          delete req.port;
        }
        if (rule.operation === Operation.Process) req.parentExecutable = sourced;
        else req.executable = sourced;
        return req;
      }),
  );
  const mangled = fc.tuple(near, fc.constantFrom(...MANGLES)).map(([op, mangle]): OperationRequest => {
    if (op.operation !== Operation.Process && op.operation !== Operation.File) return op;
    return { ...op, resource: mangle(op.resource) };
  });
  return fc.oneof(
    { weight: 3, arbitrary: near },
    { weight: 1, arbitrary: mangled },
    { weight: 1, arbitrary: random },
  );
}

/** Ways a caller may write a path that the kernel would report in normal form. */
const MANGLES: ((p: string) => string)[] = [
  (p) => `${p}/`,
  (p) => p.replace('/', '//'),
  (p) => p.replace(/\/([^/]*)$/, '/./$1'),
  (p) => p.replace(/\/([^/]*)$/, '/zz/../$1'),
];

const arbScenarioWith = (withAddresses: boolean) =>
  arbRuleSetWith(withAddresses).chain((ruleSet) =>
    fc.record({
      ruleSet: fc.constant(ruleSet),
      workload: arbWorkloadFor(ruleSet),
      operations: fc.array(arbOperationFor(ruleSet, withAddresses), { minLength: 1, maxLength: 10 }),
      postures: arbPostures,
    }),
  );

/** A rule set, a workload, operations aimed at its rules, and postures. */
export const arbScenario = arbScenarioWith(false);
/** As arbScenario, with address rules and connects or sends to destinations near them. */
export const arbAddressScenario = arbScenarioWith(true);
