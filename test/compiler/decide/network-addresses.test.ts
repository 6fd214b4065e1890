// network.matchAddresses in the decision oracle and the rule table (docs/semantics.md, "Network"): CIDR parsing
// and canonical forms, which rule decides a connect (longer prefix, then ports, then protocol, then source;
// every address rule before any protocol rule), least-permissive mode by Allow address rules with the
// network posture, and the table reader answering as the oracle on generated cases (fixed seed).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Postures, Workload } from '../../../compiler/decide/decision-input.js';
import type { RuleSet } from '../../../compiler/ir/rule-set.js';
import { canonicalizeIpAddress, parseCidr } from '../../../compiler/net/cidr.js';
import { buildRuleTable } from '../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable } from '../../../compiler/rule-table/read-rule-table.js';
import { lintTexts } from '../../../compiler/lint.js';
import { arbAddressScenario } from './arbitrary-rule-set.js';
import { Action, address, makeHostPolicy, makePodPolicy, protocol, srcPath } from './rule-set-builder.js';

const pod: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };
const host: Workload = { kind: 'host', namespace: '', labels: {}, nodeLabels: { zone: 'a' } };

function connect(to: string, port: number, proto = 'tcp', by = '/usr/bin/wget'): OperationRequest {
  return {
    operation: 'Network',
    resource: proto,
    address: to,
    port,
    executable: by,
    write: false,
    owner: false,
  };
}
function socket(proto: string, by = '/usr/bin/wget'): OperationRequest {
  return { operation: 'Network', resource: proto, executable: by, write: false, owner: false };
}

describe('CIDR blocks (compiler/net/cidr.ts)', () => {
  const cases: [string, string | null, boolean?][] = [
    ['169.254.169.254/32', '169.254.169.254/32'],
    ['169.254.169.254', '169.254.169.254/32'],
    ['fd00:ec2::254/128', 'fd00:ec2::254/128'],
    ['FD00:EC2:0:0:0:0:0:254', 'fd00:ec2::254/128'],
    ['10.0.0.1/8', '10.0.0.0/8', true],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
    ['2001:db8:0:0:1:0:0:1/64', '2001:db8::/64', true],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['::/0', '::/0'],
    ['10.0.0.0/33', null],
    ['10.0.0/8', null],
    ['10.0.0.0/08', null],
    ['10.0.0.0/-1', null],
    ['fe80::1%eth0/64', null],
    ['fd00::/129', null],
    ['', null],
    ['example.com/32', null],
  ];
  for (const [text, canonical, hostBits] of cases) {
    it(`${JSON.stringify(text)} → ${canonical ?? 'error'}`, () => {
      const parsed = parseCidr(text);
      if (canonical === null) {
        assert.equal(parsed.ok, false);
        return;
      }
      assert.ok(parsed.ok);
      assert.equal(parsed.value.canonical, canonical);
      assert.equal(parsed.value.hostBitsSet, hostBits === true);
    });
  }

  it('canonicalises addresses: IPv4-mapped IPv6 is the IPv4 address; IPv6 in RFC 5952 form', () => {
    assert.equal(canonicalizeIpAddress('::ffff:169.254.169.254'), '169.254.169.254');
    assert.equal(canonicalizeIpAddress('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    assert.equal(canonicalizeIpAddress('2001:db8:0:1:0:0:0:1'), '2001:db8:0:1::1');
    assert.equal(canonicalizeIpAddress('not an address'), undefined);
  });

  it('round-trips every canonical block of random bytes and prefixes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.tuple(
            fc.constant(4),
            fc.uint8Array({ minLength: 4, maxLength: 4 }),
            fc.integer({ min: 0, max: 32 }),
          ),
          fc.tuple(
            fc.constant(6),
            fc.uint8Array({ minLength: 16, maxLength: 16 }),
            fc.integer({ min: 0, max: 128 }),
          ),
        ),
        ([family, bytes, prefix]) => {
          const text =
            family === 4
              ? `${Array.from(bytes).join('.')}/${prefix}`
              : `${Array.from({ length: 8 }, (_, i) => (((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16)).join(':')}/${prefix}`;
          const once = parseCidr(text);
          assert.ok(once.ok, text);
          const twice = parseCidr(once.value.canonical);
          assert.ok(twice.ok);
          assert.equal(twice.value.canonical, once.value.canonical);
          assert.equal(twice.value.hostBitsSet, false);
        },
      ),
    );
  });
});

interface Case {
  name: string;
  ruleSet: RuleSet;
  op: OperationRequest;
  workload?: Workload;
  postures?: Postures;
  allowed: boolean;
  /** Line of the deciding rule, `posture`, or `none`. */
  by: number | 'posture' | 'none';
  alert?: 'Block' | 'Audit' | null;
}

const CASES: Case[] = [
  {
    name: 'a Block /32 denies a connect to that address, with an alert',
    ruleSet: {
      policies: [
        makePodPolicy('imds', [{ matcher: address('169.254.169.254/32'), action: Action.Block, line: 1 }]),
      ],
    },
    op: connect('169.254.169.254', 80),
    allowed: false,
    by: 1,
    alert: 'Block',
  },
  {
    name: 'the creation of a socket matches no address rule',
    ruleSet: {
      policies: [makePodPolicy('imds', [{ matcher: address('0.0.0.0/0'), action: Action.Block, line: 1 }])],
    },
    op: socket('tcp'),
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'an IPv4-mapped IPv6 destination matches the IPv4 block',
    ruleSet: {
      policies: [
        makePodPolicy('imds', [{ matcher: address('169.254.169.254/32'), action: Action.Block, line: 1 }]),
      ],
    },
    op: connect('::ffff:169.254.169.254', 80),
    allowed: false,
    by: 1,
    alert: 'Block',
  },
  {
    name: 'an IPv6 block matches IPv6 destinations only',
    ruleSet: {
      policies: [
        makePodPolicy('imds', [{ matcher: address('fd00:ec2::254/128'), action: Action.Block, line: 1 }]),
      ],
    },
    op: connect('169.254.169.254', 80),
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'ports: a rule with ports does not match another port',
    ruleSet: {
      policies: [
        makePodPolicy('p', [{ matcher: address('10.0.0.0/8', [443]), action: Action.Block, line: 1 }]),
      ],
    },
    op: connect('10.1.2.3', 80),
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'protocol: a udp rule does not match a tcp connect',
    ruleSet: {
      policies: [
        makePodPolicy('p', [{ matcher: address('10.0.0.0/8', [], 'udp'), action: Action.Block, line: 1 }]),
      ],
    },
    op: connect('10.1.2.3', 53),
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'a longer prefix wins over a shorter one, whatever the actions (Allow /32 over Block /8)',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: address('10.0.0.0/8'), action: Action.Block, line: 1 },
          { matcher: address('10.1.2.3/32'), action: Action.Allow, line: 2 },
        ]),
      ],
    },
    op: connect('10.1.2.3', 80),
    allowed: true,
    by: 2,
    alert: null,
  },
  {
    name: 'at the same prefix, a rule with ports wins over one without (Audit :80 over Block)',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: address('10.0.0.0/8'), action: Action.Block, line: 1 },
          { matcher: address('10.0.0.0/8', [80]), action: Action.Audit, line: 2 },
        ]),
      ],
    },
    op: connect('10.9.9.9', 80),
    allowed: true,
    by: 2,
    alert: 'Audit',
  },
  {
    name: 'at the same prefix and ports, a rule with a source wins over one without',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: address('10.0.0.0/8'), action: Action.Block, line: 1 },
          {
            matcher: address('10.0.0.0/8'),
            action: Action.Allow,
            fromSource: [srcPath('/usr/bin/wget')],
            line: 2,
          },
        ]),
      ],
    },
    op: connect('10.9.9.9', 80),
    allowed: true,
    by: 2,
    alert: null,
  },
  {
    name: 'at equal specificity Block wins over Allow',
    ruleSet: {
      policies: [
        makePodPolicy('a', [{ matcher: address('10.0.0.0/8'), action: Action.Allow, line: 1 }]),
        makePodPolicy('b', [{ matcher: address('10.0.0.0/8'), action: Action.Block, line: 2 }]),
      ],
    },
    op: connect('10.9.9.9', 80),
    allowed: false,
    by: 2,
    alert: 'Block',
  },
  {
    name: 'any address rule is more specific than a protocol rule (Allow 0.0.0.0/0 over Block tcp at connect)',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: protocol('tcp'), action: Action.Block, line: 1 },
          { matcher: address('0.0.0.0/0'), action: Action.Allow, line: 2 },
        ]),
      ],
    },
    op: connect('10.9.9.9', 80),
    allowed: true,
    by: 2,
    alert: null,
  },
  {
    name: 'a protocol rule decides a connect no address rule matches',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: protocol('tcp'), action: Action.Audit, line: 1 },
          { matcher: address('169.254.169.254/32'), action: Action.Block, line: 2 },
        ]),
      ],
    },
    op: connect('10.9.9.9', 80),
    allowed: true,
    by: 1,
    alert: 'Audit',
  },
  {
    name: 'Allow address rules: other destinations fall to runtime-network-posture (block)',
    ruleSet: {
      policies: [makePodPolicy('p', [{ matcher: address('10.0.0.0/8'), action: Action.Allow, line: 1 }])],
    },
    op: connect('8.8.8.8', 53, 'udp'),
    postures: { network: 'block' },
    allowed: false,
    by: 'posture',
    alert: 'Block',
  },
  {
    name: 'Allow address rules: other destinations are audited under the audit posture',
    ruleSet: {
      policies: [makePodPolicy('p', [{ matcher: address('10.0.0.0/8'), action: Action.Allow, line: 1 }])],
    },
    op: connect('8.8.8.8', 53, 'udp'),
    postures: { network: 'audit' },
    allowed: true,
    by: 'posture',
    alert: 'Audit',
  },
  {
    name: 'Allow address rules do not make the creation of sockets least-permissive',
    ruleSet: {
      policies: [makePodPolicy('p', [{ matcher: address('10.0.0.0/8'), action: Action.Allow, line: 1 }])],
    },
    op: socket('udp'),
    postures: { network: 'block' },
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'Allow protocol rules make connects least-permissive too; an Allow tcp lets every tcp connect through',
    ruleSet: {
      policies: [
        makePodPolicy('p', [
          { matcher: protocol('tcp'), action: Action.Allow, line: 1 },
          { matcher: address('10.0.0.0/8'), action: Action.Allow, line: 2 },
        ]),
      ],
    },
    op: connect('8.8.8.8', 443),
    postures: { network: 'block' },
    allowed: true,
    by: 1,
    alert: null,
  },
  {
    name: 'a host policy does not apply to pods',
    ruleSet: {
      policies: [
        makeHostPolicy('h', [{ matcher: address('169.254.169.254/32'), action: Action.Block, line: 1 }], {}),
      ],
    },
    op: connect('169.254.169.254', 80),
    allowed: true,
    by: 'none',
    alert: null,
  },
  {
    name: 'a host policy applies to the host',
    ruleSet: {
      policies: [
        makeHostPolicy('h', [{ matcher: address('169.254.169.254/32'), action: Action.Block, line: 1 }], {}),
      ],
    },
    workload: host,
    op: connect('169.254.169.254', 80),
    allowed: false,
    by: 1,
    alert: 'Block',
  },
];

describe('oracle and rule table: network.matchAddresses', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const workload = c.workload ?? pod;
      const d = decideOperation(c.ruleSet, workload, c.op, c.postures ?? {});
      assert.equal(d.allowed, c.allowed);
      if (typeof c.by === 'number') assert.equal(d.rule?.line, c.by);
      else assert.equal(d.basis, c.by === 'posture' ? 'posture' : 'default');
      assert.equal(d.alert?.Action ?? null, c.alert ?? null);
      if (d.alert !== null) assert.equal(d.alert.Operation, 'Network');
      // The table answers the same.
      const read = readRuleTable(buildRuleTable(c.ruleSet));
      assert.ok(read.ok);
      const expected = { ...d };
      delete expected.leastPermissiveBy;
      assert.deepEqual(
        read.table.decide(read.table.selectPolicies(workload), c.op, c.postures ?? {}),
        expected,
      );
    });
  }

  it('the table reader decides as the oracle on generated address rules and connects (fast-check)', () => {
    let connects = 0;
    let byAddressRule = 0;
    fc.assert(
      fc.property(arbAddressScenario, ({ ruleSet, workload, operations, postures }) => {
        const read = readRuleTable(buildRuleTable(ruleSet));
        assert.ok(read.ok, read.ok ? '' : read.error);
        const set = read.table.selectPolicies(workload);
        for (const op of operations) {
          const expected = decideOperation(ruleSet, workload, op, postures);
          delete expected.leastPermissiveBy;
          assert.deepEqual(read.table.decide(set, op, postures), expected, JSON.stringify(op));
          if (op.address !== undefined) {
            connects++;
            if (expected.rule?.pointer !== undefined && expected.basis === 'rule') byAddressRule++;
          }
        }
      }),
      { numRuns: 600 },
    );
    assert.ok(
      connects > 200 && byAddressRule > 50,
      `${connects} connects, ${byAddressRule} decided by a rule`,
    );
  });
});

describe('lint and compile of matchAddresses', () => {
  it('lowers a CIDR to its canonical block, ports sorted and deduplicated, protocol lower-cased', () => {
    const text = [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimePolicy',
      'metadata: {name: p, namespace: default}',
      'spec:',
      '  selector: {matchLabels: {app: web}}',
      '  network:',
      '    matchAddresses:',
      '      - {cidr: "FD00:EC2:0:0:0:0:0:254", ports: [443, 80, 443], protocol: TCP}',
      '  action: Block',
    ].join('\n');
    const { diagnostics, ruleSet } = lintTexts([{ file: 'p.yaml', text }]);
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    assert.deepEqual(ruleSet.policies[0]?.rules[0]?.matcher, {
      kind: 'address',
      cidr: 'fd00:ec2::254/128',
      prefix: 128,
      ports: [80, 443],
      protocol: 'tcp',
    });
  });

  it('refuses a port out of range (schema) and an unknown protocol', () => {
    const text = (rule: string): string =>
      [
        'apiVersion: security.runtime.com/v1',
        'kind: RuntimePolicy',
        'metadata: {name: p, namespace: default}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  network:',
        '    matchAddresses:',
        `      - ${rule}`,
        '  action: Block',
      ].join('\n');
    for (const rule of [
      '{cidr: 10.0.0.0/8, ports: [0]}',
      '{cidr: 10.0.0.0/8, ports: [65536]}',
      '{cidr: 10.0.0.0/8, protocol: raw}',
    ]) {
      const { diagnostics } = lintTexts([{ file: 'p.yaml', text: text(rule) }]);
      assert.ok(
        diagnostics.some((d) => d.severity === 'error' && d.code.startsWith('RT2')),
        `${rule}: ${diagnostics.map((d) => d.code).join(',')}`,
      );
    }
  });
});
