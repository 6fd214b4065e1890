// rtctl lint and compile as a user runs them (a child process): exit codes 0/1/2, formats, output directory.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { COMPILER_FIXTURES, REPO_ROOT } from '../support/paths.js';

const run = promisify(execFile);

async function rtctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'bin', 'rtctl.ts'), ...args],
      {
        cwd: REPO_ROOT,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const invalid = (name: string) => path.join(COMPILER_FIXTURES, 'invalid', name);

describe('rtctl lint and compile (CLI)', function () {
  this.timeout(60000);
  let out: string;
  before(() => {
    out = mkdtempSync(path.join(os.tmpdir(), 'rtctl-cli-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('lint exits 0 on the bundled examples (warning what fanotify or AppArmor does not enforce)', async () => {
    const r = await rtctl('lint', 'policies/examples');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // Two capability rules, and a raw rule (packet sockets never reach cgroup sock_create); and an icmp rule,
    // which AppArmor reads as IPv4 raw ICMP sockets only.
    assert.match(r.stdout, /0 errors, 4 warnings/);
    assert.equal(r.stdout.match(/warning RT3018 .*not enforced on fanotify/g)?.length, 3, r.stdout);
    assert.match(
      r.stdout,
      /warning RT3018 spec\.network\.matchProtocols\[1\]: not enforced on apparmor \(protocol icmp: partly/,
    );
  });

  it('lint and compile --require-enforced make what a named target does not enforce an error', async () => {
    const ok = await rtctl('lint', '--require-enforced', 'bpf-lsm', 'policies/examples');
    assert.equal(ok.code, 0, ok.stdout);
    const fan = await rtctl('lint', '--require-enforced', 'bpf-lsm,fanotify', 'policies/examples');
    assert.equal(fan.code, 1, fan.stdout);
    assert.match(fan.stdout, /3 errors, 1 warning/);
    assert.match(fan.stdout, /error RT3018 spec\.capabilities\.matchCapabilities\[0\]: .*requires fanotify/);
    const dest = path.join(out, 'require-enforced');
    const c = await rtctl('compile', '--require-enforced', 'fanotify', '-o', dest, 'policies/examples');
    assert.equal(c.code, 1, c.stderr);
    assert.match(c.stderr, /3 errors; nothing written/);
    assert.equal(existsSync(dest), false);
    const bad = await rtctl('lint', '--require-enforced', 'ebpf', 'policies/examples');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown target "ebpf"; expected bpf-lsm, fanotify, apparmor, selinux/);
  });

  it('lint exits 1 on an error and prints file:line:col with the code', async () => {
    const r = await rtctl('lint', invalid('RT2003-unknown-field.yaml'));
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /RT2003-unknown-field\.yaml:10:5: error RT2003 spec\.file\.matchPath: unknown field "matchPath" \(did you mean "matchPaths"\?\)/,
    );
  });

  it('lint exits 1 when warnings exceed --max-warnings, 0 within it', async () => {
    const f = invalid('RT3013-unknown-preset.yaml');
    assert.equal((await rtctl('lint', f)).code, 0);
    assert.equal((await rtctl('lint', '--max-warnings', '0', f)).code, 1);
    assert.equal((await rtctl('lint', '--max-warnings', '1', f)).code, 0);
  });

  it('lint exits 2 on a missing path and on a bad option', async () => {
    assert.equal((await rtctl('lint', path.join(out, 'missing.yaml'))).code, 2);
    assert.equal((await rtctl('lint', '--format', 'xml', 'policies/examples')).code, 2);
  });

  it('lint --format json|sarif|junit write machine-readable reports', async () => {
    const f = invalid('RT3001-relative-path.yaml');
    const json = JSON.parse((await rtctl('lint', '-f', 'json', f)).stdout) as Array<{
      code: string;
      line: number;
    }>;
    assert.deepEqual(
      json.map((d) => [d.code, d.line]),
      [['RT3001', 11]],
    );
    const sarif = JSON.parse((await rtctl('lint', '-f', 'sarif', f)).stdout) as { version: string };
    assert.equal(sarif.version, '2.1.0');
    const junit = (await rtctl('lint', '-f', 'junit', f)).stdout;
    assert.match(junit, /^<\?xml/);
    assert.match(junit, /failures="1"/);
  });

  it('compile writes build/ and removes artifacts of policies that disappeared', async () => {
    const src = path.join(out, 'src');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(src);
    const policy = (name: string) =>
      `apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata: {name: ${name}, namespace: ns}\nspec:\n  selector: {matchLabels: {}}\n  process:\n    matchPaths: [{path: /bin/${name}}]\n  action: Block\n`;
    writeFileSync(path.join(src, 'a.yaml'), policy('a'));
    writeFileSync(path.join(src, 'b.yaml'), policy('b'));
    const build = path.join(out, 'build');
    const r1 = await rtctl('compile', src, '-o', build);
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stderr, /compiled 2 policies \(2 rules\) from 2 files/);
    assert.ok(existsSync(path.join(build, 'policies/runtimepolicy/ns/b.yaml')));
    rmSync(path.join(src, 'b.yaml'));
    const r2 = await rtctl('compile', src, '-o', build);
    assert.equal(r2.code, 0, r2.stderr);
    assert.ok(!existsSync(path.join(build, 'policies/runtimepolicy/ns/b.yaml')), 'stale artifact removed');
    assert.doesNotMatch(readFileSync(path.join(build, 'kustomization.yaml'), 'utf8'), /b\.yaml/);
  });

  it('compile exits 1 and writes nothing when a policy has an error', async () => {
    const build = path.join(out, 'never');
    const r = await rtctl('compile', invalid('RT2008-missing-selector.yaml'), '-o', build);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /RT2008/);
    assert.ok(!existsSync(build));
  });
});
