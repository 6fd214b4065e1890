// Golden rule tables over the examples, the conformance fixtures and the upstream corpus (the .bin, its manifest and a text dump),
// and the reader walk checked against the oracle on operations aimed at every rule of the corpus.
import assert from 'node:assert/strict';
import { RULES_BACKEND } from '../../../../compiler/backends/rules/rules-backend.js';
import { readRuleTable } from '../../../../compiler/rule-table/read-rule-table.js';
import { dumpRuleTable } from '../../../../compiler/rule-table/dump-rule-table.js';
import { decideOperation } from '../../../../compiler/decide/decide.js';
import type { OperationRequest, Workload } from '../../../../compiler/decide/decision-input.js';
import { Operation, type Matcher, type PolicyIR } from '../../../../compiler/ir/rule-set.js';
import { checkGolden, emitCorpus, itOnCorpus, loadCorpora } from '../golden-support.js';
import { lintTexts } from '../../../../compiler/lint.js';

function workloadOf(policy: PolicyIR): Workload {
  if (policy.target.kind === 'host') {
    const nodeLabels = Object.fromEntries(
      Object.entries(policy.target.nodeLabels).map(([k, v]) => [k, v === '*' ? 'any' : v]),
    );
    return { kind: 'host', namespace: '', labels: {}, nodeLabels };
  }
  const labels: Record<string, string> = { ...policy.target.matchLabels };
  for (const e of policy.target.matchExpressions) {
    const pair = e.operator === 'In' ? e.values[0] : undefined;
    if (pair !== undefined) labels[pair.split('=')[0] ?? ''] = pair.split('=').slice(1).join('=');
  }
  return { kind: 'container', namespace: policy.target.namespace, labels, nodeLabels: {} };
}

function resourcesNear(m: Matcher): string[] {
  switch (m.kind) {
    case 'path':
      return [m.path, `${m.path}x`];
    case 'execname':
      return [`/usr/bin/${m.name}`, `/bin/${m.name}x`];
    case 'directory':
      return [`${m.dir}f`, `${m.dir}sub/f`, m.dir.slice(0, -1)];
    case 'pattern':
      return [m.pattern.replace(/\*\*/g, 'a/b').replace(/\*/g, 'c').replace(/\?/g, 'd'), `${m.pattern}/z`];
    case 'protocol':
      return [m.protocol, 'udp', 'icmp'];
    case 'capability':
      return [m.capability, 'sys_admin'];
    case 'address':
      return [m.protocol === '' ? 'tcp' : m.protocol, 'udp'];
  }
}

/** Destinations of connects near an address rule: its network, one outside it; none for other rules. */
function destinationsNear(m: Matcher): ({ address: string; port: number } | undefined)[] {
  if (m.kind !== 'address') return [undefined];
  const network = m.cidr.slice(0, m.cidr.indexOf('/'));
  const outside = m.cidr.includes(':') ? '2001:db8::1' : '192.0.2.1';
  const ports = [...m.ports.slice(0, 1), 9];
  return [undefined, ...[network, outside].flatMap((address) => ports.map((port) => ({ address, port })))];
}

describe('rules backend: golden tables and the walk on the corpus', () => {
  for (const entry of loadCorpora()) {
    itOnCorpus(entry, `golden rule table of ${entry.name}`, (corpus) => {
      const out = emitCorpus(RULES_BACKEND, corpus);
      const bin = out.artifacts.find((a) => a.path === 'rules/rule-table.bin');
      assert.ok(bin && bin.content instanceof Uint8Array);
      const read = readRuleTable(bin.content);
      assert.ok(read.ok, read.ok ? '' : read.error);
      const files = new Map<string, string | Uint8Array>(
        out.artifacts.map((a) => [a.path.replace(/^rules\//, ''), a.content]),
      );
      files.set('rule-table.txt', dumpRuleTable(read.table));
      checkGolden('rules', corpus.name, files);
      assert.deepEqual(emitCorpus(RULES_BACKEND, corpus).artifacts, out.artifacts, 'deterministic bytes');
    });

    itOnCorpus(
      entry,
      `the table walk equals the oracle on operations aimed at every rule of ${entry.name}`,
      (corpus) => {
        const out = emitCorpus(RULES_BACKEND, corpus);
        const bin = out.artifacts.find((a) => a.path === 'rules/rule-table.bin');
        assert.ok(bin && bin.content instanceof Uint8Array);
        const read = readRuleTable(bin.content);
        assert.ok(read.ok);
        const ruleSet = corpus.lint.ruleSet;
        let checked = 0;
        let decidedByRule = 0;
        for (const policy of ruleSet.policies) {
          const workload = workloadOf(policy);
          const set = read.table.selectPolicies(workload);
          for (const rule of policy.rules) {
            const actors = [
              ...rule.fromSource.map((s) => (s.kind === 'path' ? s.path : `${s.dir}bin`)),
              '/bin/sh',
            ];
            for (const resource of resourcesNear(rule.matcher)) {
              for (const destination of destinationsNear(rule.matcher)) {
                for (const actor of actors) {
                  for (const write of [false, true]) {
                    for (const owner of [false, true]) {
                      const op: OperationRequest = {
                        operation: rule.operation,
                        resource,
                        write,
                        owner,
                        ...destination,
                      };
                      if (rule.operation === Operation.Process) op.parentExecutable = actor;
                      else op.executable = actor;
                      for (const postures of [
                        {},
                        { file: 'block', network: 'block', capabilities: 'block' },
                      ] as const) {
                        const expected = decideOperation(ruleSet, workload, op, postures);
                        delete expected.leastPermissiveBy;
                        assert.deepEqual(
                          read.table.decide(set, op, postures),
                          expected,
                          JSON.stringify({ op, policy: policy.name }),
                        );
                        checked++;
                        if (expected.basis === 'rule') decidedByRule++;
                      }
                    }
                  }
                }
              }
            }
          }
        }
        assert.ok(
          checked > 100 && decidedByRule > checked / 10,
          `${checked} checked, ${decidedByRule} decided by a rule`,
        );
      },
    );
  }
});

describe('rules backend: what the table does not carry', () => {
  it('warns RT4201 at each syscalls rule and filelessExec preset (the table has no place for them)', () => {
    const text = [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimePolicy',
      'metadata: {name: sys, namespace: ns}',
      'spec:',
      '  selector: {matchLabels: {app: web}}',
      '  syscalls:',
      '    matchSyscalls:',
      '      - syscall: [unlink]',
      '  presets:',
      '    - name: filelessExec',
      '    - name: anonMapExec',
      '  action: Audit',
      '',
    ].join('\n');
    const lint = lintTexts([{ file: 'sys.yaml', text }]);
    const out = RULES_BACKEND.emit({ ruleSet: lint.ruleSet, documents: lint.documents });
    assert.deepEqual(
      out.diagnostics.map((d) => [d.code, d.start?.line, d.pointer]),
      [
        ['RT4201', 8, '/spec/syscalls/matchSyscalls/0'],
        ['RT4201', 10, '/spec/presets/0'],
      ],
    );
  });
});
