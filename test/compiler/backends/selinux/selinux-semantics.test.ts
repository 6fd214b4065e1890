// The SELinux modules decide like the oracle, checked with the real tools: random host rule sets are
// built with secilc against the minimal base, each path's label comes from libselinux (matchpathcon),
// the permissions of the acting domain from the built policy (sesearch), and the answer is compared with
// the oracle's. Compared where SELinux can speak: the rules the enforcement table says it enforces, no
// least-permissive (posture) decisions (RT4101), paths one file context matches (overlap is resolved by
// libselinux's own specificity), acting users that do not own the file (RT4103).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import '../../../support/property-seed.js';
import { emitSelinuxModules } from '../../../../compiler/backends/selinux/selinux-backend.js';
import { isRepresentableInFileContext } from '../../../../compiler/backends/selinux/escape-selinux.js';
import { decideOperation } from '../../../../compiler/decide/decide.js';
import { normalizeOperationRequest } from '../../../../compiler/decide/match-rule.js';
import type { OperationRequest, Workload } from '../../../../compiler/decide/decision-input.js';
import { Operation, PolicyKind, type PolicyIR, type RuleSet } from '../../../../compiler/ir/rule-set.js';
import { hasCommand, requirePrereqs } from '../../../support/prereq.js';
import { REAL_TOOL_TIMEOUT_MS } from '../../../support/timeouts.js';
import { arbScenario, restrictToTarget } from '../../decide/arbitrary-rule-set.js';
import { EnforcementTarget } from '../../../../compiler/enforcement/enforcement-table.js';
import { repoRoot } from '../golden-support.js';

const BASE = path.join(repoRoot, 'test/fixtures/selinux-base/base.cil');
const HOST: Workload = { kind: 'host', namespace: '', labels: {}, nodeLabels: { role: 'worker' } };

/**
 * Every policy as a host policy for all nodes, keeping the rules the enforcement table says SELinux enforces.
 * Allow rules and ownerOnly are kept: the comparison leaves out posture decisions (no least-permissive mode,
 * RT4101) and asks as a user who does not own the file (RT4103), where SELinux decides like the oracle.
 */
function toHostRuleSet(ruleSet: RuleSet): RuleSet {
  const host: RuleSet = {
    policies: ruleSet.policies.map((p): PolicyIR => ({
      ...p,
      kind: PolicyKind.RuntimeHostPolicy,
      namespace: '',
      target: { kind: 'host', nodeLabels: {} },
    })),
  };
  return restrictToTarget(host, EnforcementTarget.Selinux, ['action.Allow', 'ownerOnly']);
}

interface Perms {
  allow: Map<string, Set<string>>;
  audit: Map<string, Set<string>>;
}

function parseRules(output: string, kind: 'allow' | 'auditallow'): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of output.split('\n')) {
    const m = new RegExp(`^${kind} (\\S+) (\\S+):file (?:\\{ (.+) \\}|(\\S+));$`).exec(line.trim());
    if (m === null) continue;
    const key = `${m[1] ?? ''} ${m[2] ?? ''}`;
    const set = out.get(key) ?? new Set<string>();
    for (const p of (m[3] ?? m[4] ?? '').split(' ')) set.add(p);
    out.set(key, set);
  }
  return out;
}

describe('SELinux modules decide like the oracle (secilc + matchpathcon + sesearch)', function () {
  this.timeout(REAL_TOOL_TIMEOUT_MS);
  let work = '';
  before(function () {
    requirePrereqs(this, [
      [hasCommand('secilc'), 'secilc (Debian package secilc)'],
      [hasCommand('matchpathcon'), 'matchpathcon (Debian package selinux-utils)'],
      [hasCommand('sesearch'), 'sesearch (Debian package setools)'],
    ]);
    work = mkdtempSync(path.join(os.tmpdir(), 'rtctl-selinux-sem-'));
  });
  after(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('allowed/denied and audited per path and acting program (fast-check)', function () {
    let compared = 0;
    let denied = 0;
    fc.assert(
      fc.property(arbScenario, ({ ruleSet: random, operations }) => {
        const ruleSet = toHostRuleSet(random);
        const out = emitSelinuxModules({ ruleSet, documents: [] });
        const module = out.artifacts.find((a) => a.path.endsWith('.cil'));
        if (module === undefined) return;
        const text = String(module.content);
        const block = /\(block (\S+)/.exec(text)?.[1] ?? '';
        const modFile = path.join(work, 'module.cil');
        const policy = path.join(work, 'policy.bin');
        const fcFile = path.join(work, 'file_contexts');
        writeFileSync(modFile, text);
        const built = spawnSync('secilc', ['-o', policy, '-f', fcFile, BASE, modFile], { encoding: 'utf8' });
        assert.equal(built.status, 0, built.stderr);
        const fileContexts = spawnSync('cat', [fcFile], { encoding: 'utf8' }).stdout;
        const regexes = fileContexts
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => new RegExp(`^${l.split('\t')[0] ?? ''}$`));
        const sources = new Map<string, string>();
        for (const m of text.matchAll(/; (d\d+): processes running (\S+)/g))
          sources.set(m[2] ?? '', `${block}.${m[1] ?? ''}`);

        const ops = operations
          .filter((op) => op.operation === Operation.File || op.operation === Operation.Process)
          .map((op): OperationRequest => ({ ...normalizeOperationRequest(op), owner: false, tty: false }))
          .filter((op) => isRepresentableInFileContext(op.resource) && op.resource.startsWith('/'));
        const decided = ops
          .map((op) => ({ op, d: decideOperation(ruleSet, HOST, op, {}) }))
          .filter(
            ({ op, d }) => d.basis !== 'posture' && regexes.filter((r) => r.test(op.resource)).length <= 1,
          );
        if (decided.length === 0) return;
        const labels = spawnSync('matchpathcon', ['-f', fcFile, ...decided.map((x) => x.op.resource)], {
          encoding: 'utf8',
        });
        assert.equal(labels.status, 0, labels.stderr);
        const labelOf = new Map(
          labels.stdout
            .trim()
            .split('\n')
            .map((l) => {
              const [p, ctx] = l.split('\t');
              return [
                p ?? '',
                ctx === undefined || ctx === '<<none>>' ? null : (ctx.split(':')[2] ?? null),
              ] as const;
            }),
        );
        const perms: Perms = {
          allow: parseRules(
            spawnSync('sesearch', ['-A', '-c', 'file', policy], { encoding: 'utf8' }).stdout,
            'allow',
          ),
          audit: parseRules(
            spawnSync('sesearch', ['--auditallow', '-c', 'file', policy], { encoding: 'utf8' }).stdout,
            'auditallow',
          ),
        };
        for (const { op, d } of decided) {
          const actor = op.operation === Operation.Process ? op.parentExecutable : op.executable;
          const subject = actor === undefined ? undefined : sources.get(actor);
          const subjects =
            subject === undefined ? ['domain', `${block}.others`, 'unconfined_t'] : ['domain', subject];
          if (sources.size === 0 && subject === undefined) subjects.push('domain');
          const label = labelOf.get(op.resource);
          const need =
            op.operation === Operation.Process ? ['execute'] : op.write ? ['write'] : ['read', 'open'];
          let allowed = true;
          let audited = false;
          if (label !== null && label !== undefined) {
            const granted = new Set(subjects.flatMap((s) => [...(perms.allow.get(`${s} ${label}`) ?? [])]));
            const auditGranted = new Set(
              subjects.flatMap((s) => [...(perms.audit.get(`${s} ${label}`) ?? [])]),
            );
            allowed = need.every((p) => granted.has(p));
            audited = need.some((p) => auditGranted.has(p));
          }
          const context = `${JSON.stringify(op)} label=${String(label)} subject=${subject ?? 'others'}\n${text}`;
          assert.equal(allowed, d.allowed, `allowed: ${context}`);
          assert.equal(audited, d.alert?.Action === 'Audit', `audited: ${context}`);
          compared++;
          if (!d.allowed) denied++;
        }
      }),
      { numRuns: 25, endOnFailure: true },
    );
    assert.ok(compared > 15 && denied > 0, `${compared} compared, ${denied} denied`);
  });
});
