// Socket names (docs/semantics.md, "Socket names"): a socket has the names of its type and of its protocol,
// and a protocol rule (or an address rule's protocol) matches when it is one of them. Table-driven: every
// socket kind of interest × every rule set of interest, decided by the oracle and by the rule table's own
// walk (compiler/rule-table/, what the kernel planes' encoders use), which must agree.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Postures, Workload } from '../../../compiler/decide/decision-input.js';
import { getSocketNames, type SocketFacts } from '../../../compiler/decide/socket-names.js';
import type { RuleSet } from '../../../compiler/ir/rule-set.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable } from '../../../compiler/rule-table/read-rule-table.js';
import { Action, Operation, address, makePodPolicy, protocol, srcPath } from './rule-set-builder.js';
import { arbAddressScenario } from './arbitrary-rule-set.js';

const pod: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };
const AF_INET = 2;
const AF_INET6 = 10;
const AF_PACKET = 17;
const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_DGRAM = 2;
const SOCK_RAW = 3;
const SOCK_NONBLOCK = 0o4000;

/** The socket kinds the planes meet, with their names. */
const SOCKETS: Record<string, { facts: SocketFacts; names: string[] }> = {
  'raw icmp (ping as root)': {
    facts: { family: AF_INET, type: SOCK_RAW, protocol: 1 },
    names: ['raw', 'icmp'],
  },
  'raw icmpv6': { facts: { family: AF_INET6, type: SOCK_RAW, protocol: 58 }, names: ['raw', 'icmp'] },
  'ping socket (icmp datagram)': {
    facts: { family: AF_INET, type: SOCK_DGRAM, protocol: 1 },
    names: ['icmp'],
  },
  'ping6 socket': { facts: { family: AF_INET6, type: SOCK_DGRAM, protocol: 58 }, names: ['icmp'] },
  'raw tcp (protocol 6 on SOCK_RAW)': {
    facts: { family: AF_INET, type: SOCK_RAW, protocol: 6 },
    names: ['raw'],
  },
  'packet socket': { facts: { family: AF_PACKET, type: SOCK_RAW, protocol: 0x0300 }, names: ['raw'] },
  'packet datagram socket': { facts: { family: AF_PACKET, type: SOCK_DGRAM, protocol: 0 }, names: ['raw'] },
  tcp: { facts: { family: AF_INET, type: SOCK_STREAM | SOCK_NONBLOCK, protocol: 0 }, names: ['tcp'] },
  udp: { facts: { family: AF_INET6, type: SOCK_DGRAM, protocol: 17 }, names: ['udp'] },
  unix: { facts: { family: AF_UNIX, type: SOCK_STREAM, protocol: 0 }, names: [] },
};

describe('socket names', () => {
  for (const [name, s] of Object.entries(SOCKETS)) {
    it(`${name}: ${JSON.stringify(s.names)}`, () => {
      assert.deepEqual(getSocketNames(s.facts), s.names);
    });
  }
});

const rs = (...policies: RuleSet['policies']): RuleSet => ({ policies });
type Outcome = 'block' | 'audit' | 'allow' | 'posture-block' | 'posture-audit' | 'none';

interface Case {
  name: string;
  ruleSet: RuleSet;
  postures?: Postures;
  /** Expected outcome per socket kind (of SOCKETS), for the creation of the socket. */
  expect: Partial<Record<keyof typeof SOCKETS, Outcome>>;
  /** The policy whose rule decides, when a rule decides (per socket kind, else the first policy). */
  by?: Partial<Record<keyof typeof SOCKETS, string>>;
}

const CASES: Case[] = [
  {
    name: 'Block raw',
    ruleSet: rs(makePodPolicy('no-raw', [{ matcher: protocol('raw'), action: Action.Block }])),
    expect: {
      'raw icmp (ping as root)': 'block',
      'raw icmpv6': 'block',
      'ping socket (icmp datagram)': 'none',
      'raw tcp (protocol 6 on SOCK_RAW)': 'block',
      'packet socket': 'block',
      tcp: 'none',
    },
  },
  {
    name: 'Block icmp',
    ruleSet: rs(makePodPolicy('no-icmp', [{ matcher: protocol('icmp'), action: Action.Block }])),
    expect: {
      'raw icmp (ping as root)': 'block',
      'raw icmpv6': 'block',
      'ping socket (icmp datagram)': 'block',
      'ping6 socket': 'block',
      'raw tcp (protocol 6 on SOCK_RAW)': 'none',
      'packet socket': 'none',
      udp: 'none',
    },
  },
  {
    name: 'Audit icmp',
    ruleSet: rs(makePodPolicy('see-icmp', [{ matcher: protocol('ICMP'), action: Action.Audit }])),
    expect: {
      'raw icmp (ping as root)': 'audit',
      'ping socket (icmp datagram)': 'audit',
      'raw tcp (protocol 6 on SOCK_RAW)': 'none',
    },
  },
  {
    name: 'Allow icmp, network posture block (least-permissive)',
    ruleSet: rs(makePodPolicy('only-icmp', [{ matcher: protocol('icmp'), action: Action.Allow }])),
    postures: { network: 'block' },
    expect: {
      'raw icmp (ping as root)': 'allow',
      'ping socket (icmp datagram)': 'allow',
      'raw tcp (protocol 6 on SOCK_RAW)': 'posture-block',
      'packet socket': 'posture-block',
      tcp: 'posture-block',
    },
  },
  {
    name: 'Allow tcp alone, network posture block',
    ruleSet: rs(makePodPolicy('only-tcp', [{ matcher: protocol('tcp'), action: Action.Allow }])),
    postures: { network: 'block' },
    expect: {
      'raw icmp (ping as root)': 'posture-block',
      'ping socket (icmp datagram)': 'posture-block',
      tcp: 'allow',
    },
  },
  {
    name: 'Allow raw, network posture audit',
    ruleSet: rs(makePodPolicy('only-raw', [{ matcher: protocol('raw'), action: Action.Allow }])),
    postures: { network: 'audit' },
    expect: {
      'raw icmp (ping as root)': 'allow',
      'ping socket (icmp datagram)': 'posture-audit',
      'packet socket': 'allow',
    },
  },
  {
    // Two rules match through different names: the usual precedence (equal specificity: Block > Audit > Allow).
    name: 'Allow icmp and Block raw: Block wins on a raw ICMP socket',
    ruleSet: rs(
      makePodPolicy('mixed', [
        { matcher: protocol('icmp'), action: Action.Allow, line: 10 },
        { matcher: protocol('raw'), action: Action.Block, line: 20 },
      ]),
    ),
    postures: { network: 'block' },
    expect: {
      'raw icmp (ping as root)': 'block',
      'ping socket (icmp datagram)': 'allow',
      'raw tcp (protocol 6 on SOCK_RAW)': 'block',
      tcp: 'posture-block',
    },
  },
  {
    name: 'Audit raw and Allow icmp in two policies: Audit wins on a raw ICMP socket',
    ruleSet: rs(
      makePodPolicy('a-allow-icmp', [{ matcher: protocol('icmp'), action: Action.Allow }]),
      makePodPolicy('b-audit-raw', [{ matcher: protocol('raw'), action: Action.Audit }]),
    ),
    expect: { 'raw icmp (ping as root)': 'audit', 'ping socket (icmp datagram)': 'allow' },
    by: { 'raw icmp (ping as root)': 'b-audit-raw' },
  },
  {
    name: 'Block raw and Block icmp in two policies: the tie goes to the policy name',
    ruleSet: rs(
      makePodPolicy('z-no-raw', [{ matcher: protocol('raw'), action: Action.Block }]),
      makePodPolicy('a-no-icmp', [{ matcher: protocol('icmp'), action: Action.Block }]),
    ),
    expect: { 'raw icmp (ping as root)': 'block', 'packet socket': 'block' },
    by: { 'raw icmp (ping as root)': 'a-no-icmp', 'packet socket': 'z-no-raw' },
  },
  {
    name: 'Block all and Allow icmp: a named protocol is more specific than all, through either name',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: protocol('all'), action: Action.Block },
        { matcher: protocol('icmp'), action: Action.Allow },
      ]),
    ),
    expect: {
      'raw icmp (ping as root)': 'allow',
      'ping socket (icmp datagram)': 'allow',
      'raw tcp (protocol 6 on SOCK_RAW)': 'block',
    },
  },
  {
    name: 'Block raw with fromSource: only that executable',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: protocol('raw'), action: Action.Block, fromSource: [srcPath('/usr/bin/ping')] },
      ]),
    ),
    expect: { 'raw icmp (ping as root)': 'block', 'ping socket (icmp datagram)': 'none' },
  },
];

function outcome(d: ReturnType<typeof decideOperation>): Outcome {
  if (d.basis === 'posture') return d.allowed ? 'posture-audit' : 'posture-block';
  if (d.rule === null) return 'none';
  if (d.alert === null) return 'allow';
  return d.allowed ? 'audit' : 'block';
}

function socketOp(kind: keyof typeof SOCKETS, extra: Partial<OperationRequest> = {}): OperationRequest {
  const names = SOCKETS[kind]?.names ?? [];
  return {
    operation: Operation.Network,
    resource: names[0] ?? '',
    socketNames: names,
    executable: '/usr/bin/ping',
    write: false,
    owner: false,
    ...extra,
  };
}

describe('decision oracle: a socket matches the rules of each of its names', () => {
  for (const c of CASES) {
    for (const [kind, want] of Object.entries(c.expect)) {
      it(`${c.name}: ${kind} → ${want}`, () => {
        const op = socketOp(kind);
        const d = decideOperation(c.ruleSet, pod, op, c.postures);
        assert.equal(outcome(d), want);
        const by = c.by?.[kind];
        if (by !== undefined) assert.equal(d.rule?.policy, by);
        // The rule table's walk (what the kernel planes' encoders run) decides the same.
        const read = readRuleTable(buildRuleTableImage(c.ruleSet).bytes);
        assert.ok(read.ok);
        const t = read.table.decide(read.table.selectPolicies(pod), op, c.postures);
        assert.deepEqual(
          { allowed: t.allowed, basis: t.basis, alert: t.alert, rule: t.rule?.line ?? null },
          { allowed: d.allowed, basis: d.basis, alert: d.alert, rule: d.rule?.line ?? null },
        );
      });
    }
  }

  it('without socketNames, the resource is the only name (existing callers)', () => {
    const ruleSet = rs(makePodPolicy('no-icmp', [{ matcher: protocol('icmp'), action: Action.Block }]));
    const base = { operation: Operation.Network, write: false, owner: false } as const;
    assert.equal(decideOperation(ruleSet, pod, { ...base, resource: 'raw' }).allowed, true);
    assert.equal(decideOperation(ruleSet, pod, { ...base, resource: 'ICMP' }).allowed, false);
  });
});

describe('decision oracle: an address rule protocol is one of the socket names', () => {
  const cases: {
    name: string;
    rule: ReturnType<typeof address>;
    kind: keyof typeof SOCKETS;
    want: Outcome;
  }[] = [
    {
      name: 'protocol icmp, raw ICMP socket',
      rule: address('10.0.0.0/8', [], 'icmp'),
      kind: 'raw icmp (ping as root)',
      want: 'block',
    },
    {
      name: 'protocol icmp, ping socket',
      rule: address('10.0.0.0/8', [], 'icmp'),
      kind: 'ping socket (icmp datagram)',
      want: 'block',
    },
    {
      name: 'protocol icmp, raw tcp socket',
      rule: address('10.0.0.0/8', [], 'icmp'),
      kind: 'raw tcp (protocol 6 on SOCK_RAW)',
      want: 'none',
    },
    {
      name: 'protocol tcp, raw tcp socket (its names do not include tcp)',
      rule: address('10.0.0.0/8', [], 'tcp'),
      kind: 'raw tcp (protocol 6 on SOCK_RAW)',
      want: 'none',
    },
    {
      name: 'no protocol, raw ICMP socket',
      rule: address('10.0.0.0/8'),
      kind: 'raw icmp (ping as root)',
      want: 'block',
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.want}`, () => {
      const ruleSet = rs(makePodPolicy('p', [{ matcher: c.rule, action: Action.Block }]));
      const op = socketOp(c.kind, { address: '10.1.2.3', port: 0 });
      const d = decideOperation(ruleSet, pod, op);
      assert.equal(outcome(d), c.want);
      const read = readRuleTable(buildRuleTableImage(ruleSet).bytes);
      assert.ok(read.ok);
      assert.equal(read.table.decide(read.table.selectPolicies(pod), op).allowed, d.allowed);
    });
  }
});

describe('socket names: the rule table walk decides every socket kind as the oracle (fast-check, fixed seed)', () => {
  it('agrees on generated rule sets, workloads, postures and destinations for every socket kind', () => {
    let compared = 0;
    let twoNames = 0;
    fc.assert(
      fc.property(arbAddressScenario, (scenario) => {
        const read = readRuleTable(buildRuleTableImage(scenario.ruleSet).bytes);
        if (!read.ok) return false;
        const set = read.table.selectPolicies(scenario.workload);
        for (const op of scenario.operations.filter((o) => o.operation === Operation.Network)) {
          for (const kind of Object.keys(SOCKETS)) {
            const names = SOCKETS[kind]?.names ?? [];
            if (names.length === 0) continue;
            const req: OperationRequest = { ...op, resource: names[0] ?? '', socketNames: names };
            const d = decideOperation(scenario.ruleSet, scenario.workload, req, scenario.postures);
            const t = read.table.decide(set, req, scenario.postures);
            assert.deepEqual(
              { allowed: t.allowed, alert: t.alert, line: t.rule?.line ?? null },
              { allowed: d.allowed, alert: d.alert, line: d.rule?.line ?? null },
              `${kind} ${JSON.stringify(req)}`,
            );
            compared++;
            if (names.length > 1) twoNames++;
          }
        }
        return true;
      }),
      { numRuns: 300 },
    );
    assert.ok(compared > 1000 && twoNames > 200, `${compared} compared, ${twoNames} with two names`);
  });
});
