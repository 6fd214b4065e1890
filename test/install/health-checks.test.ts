// The GitOps health checks of the policy kinds: the Argo CD health.lua cases of health_test.yaml run by a
// real Lua 5.1 interpreter (Debian lua5.1), and the Flux healthCheckExprs evaluated by a CEL library, on the
// same cases: no status or an older observedGeneration → Progressing, Ready True → Healthy, Ready False →
// Degraded with the message.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { evaluate } from '@marcbachmann/cel-js';
import { parse } from 'yaml';
import {
  caseObject,
  FLUX_EXPRESSIONS,
  Health,
  HEALTH_CASES,
  POLICY_KINDS,
  type HealthCase,
} from '../../install/gitops/health-checks.js';
import { ReadyReason } from '../../controller/policy-status.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { REPO_ROOT } from '../support/paths.js';

/** A Lua 5.1 literal of a JSON value (strings byte-escaped, so no input can break out of the literal). */
export function toLua(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string')
    return `"${[...Buffer.from(v, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b}`)).join('')}"`;
  if (Array.isArray(v)) return `{${v.map(toLua).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `[${toLua(k)}] = ${toLua(x)}`)
    .join(', ')}}`;
}

function runLua(script: string, object: unknown): { status: string; message: string } {
  const harness = `obj = ${toLua(object)}\nlocal check = assert(loadfile(${toLua(script)}))\nlocal hs = check()\nio.write(hs.status, "\\n", hs.message or "")\n`;
  const out = execFileSync('lua5.1', ['-'], { input: harness, encoding: 'utf8' });
  const [status = '', ...message] = out.split('\n');
  return { status, message: message.join('\n') };
}

function fluxHealth(object: Record<string, unknown>): Health {
  const vars = object;
  const test = (expr: string): boolean => evaluate(expr, vars) === true;
  try {
    if (test(FLUX_EXPRESSIONS.inProgress)) return Health.Progressing;
    if (test(FLUX_EXPRESSIONS.failed)) return Health.Degraded;
    if (test(FLUX_EXPRESSIONS.current)) return Health.Healthy;
  } catch {
    // Flux waits while an expression cannot be evaluated (a field such as status is missing).
  }
  return Health.Progressing;
}

describe('install: GitOps health of RuntimePolicy and RuntimeHostPolicy', () => {
  for (const kind of POLICY_KINDS) {
    const dir = path.join(REPO_ROOT, 'deploy/argocd/resource_customizations/security.runtime.com', kind);
    const tests = (
      parse(readFileSync(path.join(dir, 'health_test.yaml'), 'utf8')) as {
        tests: Array<{ healthStatus: { status: string; message: string }; inputPath: string }>;
      }
    ).tests;
    for (const t of tests) {
      it(`Argo CD health.lua under Lua 5.1: ${kind} ${t.inputPath} → ${t.healthStatus.status}`, function () {
        requirePrereqs(this, [[hasCommand('lua5.1'), 'lua5.1 (Debian package lua5.1)']]);
        const object = parse(readFileSync(path.join(dir, t.inputPath), 'utf8')) as unknown;
        assert.deepEqual(runLua(path.join(dir, 'health.lua'), object), t.healthStatus);
      });
    }
  }

  it('health_test.yaml holds every case, and its cases cover the four outcomes', () => {
    const statuses = new Set(HEALTH_CASES.map((c: HealthCase) => c.health));
    assert.deepEqual([...statuses].sort(), [Health.Degraded, Health.Healthy, Health.Progressing]);
    assert.ok(HEALTH_CASES.some((c) => c.status === undefined));
    assert.ok(
      HEALTH_CASES.some(
        (c) => c.status !== undefined && Number(c.status['observedGeneration']) < c.generation,
      ),
    );
  });

  it('the cases hold the status the controller writes for every Ready reason, with the health each must give', () => {
    const reasons = new Map<string, Health>();
    for (const c of HEALTH_CASES) {
      const conditions = (c.status?.['conditions'] ?? []) as Array<{
        type: string;
        reason: string;
        status: string;
      }>;
      const ready = conditions.find((x) => x.type === 'Ready');
      if (ready === undefined || Number(c.status?.['observedGeneration']) !== c.generation) continue;
      reasons.set(ready.reason, c.health);
      const expected =
        ready.status === 'True'
          ? Health.Healthy
          : ready.status === 'False'
            ? Health.Degraded
            : Health.Progressing;
      assert.equal(c.health, expected, c.name);
      assert.notEqual(c.message, '', c.name);
    }
    assert.deepEqual([...reasons.keys()].sort(), Object.values(ReadyReason).sort());
  });

  it('toLua escapes every byte that could end a Lua string', function () {
    requirePrereqs(this, [[hasCommand('lua5.1'), 'lua5.1 (Debian package lua5.1)']]);
    const tricky = 'a"b\\c\n]]--\u00e9';
    const out = execFileSync('lua5.1', ['-'], { input: `io.write(${toLua(tricky)})`, encoding: 'utf8' });
    assert.equal(out, tricky);
  });

  for (const kind of POLICY_KINDS) {
    for (const c of HEALTH_CASES) {
      it(`Flux healthCheckExprs (CEL): ${kind} ${c.name} → ${c.health}`, () => {
        assert.equal(fluxHealth(caseObject(kind, c)), c.health);
      });
    }
  }
});
