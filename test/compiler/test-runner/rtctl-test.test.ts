// rtctl test: the suite format (ajv-validated, errors with line and column), cases decided by the oracle, the
// text/JSON/JUnit reports, --require-tests, and the suite shipped for policies/examples.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { readTestSuites } from '../../../compiler/test-runner/read-test-suites.js';
import { REPO_ROOT } from '../../support/paths.js';
import { runRtctl } from '../../support/run-rtctl.js';

const EXAMPLES = path.join(REPO_ROOT, 'policies', 'examples');
const HEAD =
  'apiVersion: test.security.runtime.com/v1\nkind: RuntimePolicyTest\nmetadata: {name: s}\ncases:\n';
const CASE = (body: string) =>
  `${HEAD}  - name: c\n    workload: {namespace: shop, labels: {app: web}}\n${body}`;

describe('rtctl test: suite format (ajv, errors placed at line:column)', () => {
  const cases: Array<[string, string, string, number, RegExp]> = [
    [
      'unknown field in expect',
      CASE('    operation: {process: /usr/bin/apt}\n    expect: {allowed: false, polcy: x}\n'),
      'RT2003',
      8,
      /cases\[0\]\.expect\.polcy: unknown field "polcy"/,
    ],
    [
      'missing expect',
      CASE('    operation: {process: /usr/bin/apt}\n'),
      'RT2002',
      5,
      /cases\[0\]\.expect: required field is missing/,
    ],
    [
      'allowed is not a boolean',
      CASE('    operation: {process: /usr/bin/apt}\n    expect: {allowed: "no"}\n'),
      'RT2001',
      8,
      /expect\.allowed/,
    ],
    [
      'relative path',
      CASE('    operation: {file: etc/shadow}\n    expect: {allowed: true}\n'),
      'RT2004',
      7,
      /operation\.file: must be an absolute path/,
    ],
    [
      'action not allowed',
      CASE('    operation: {process: /x}\n    expect: {allowed: true, action: Allow}\n'),
      'RT2004',
      8,
      /expect\.action: must be one of "Block", "Audit", "none"/,
    ],
    [
      'two operations',
      CASE('    operation: {process: /x, file: /y}\n    expect: {allowed: true}\n'),
      'RT2013',
      7,
      /give exactly one of process, file, network, capability, got process and file/,
    ],
    [
      'write without file',
      CASE('    operation: {process: /x, write: true}\n    expect: {allowed: true}\n'),
      'RT2013',
      7,
      /operation\.write goes with operation\.file/,
    ],
    [
      'workload both pod and host',
      `${HEAD}  - name: c\n    workload: {namespace: a, host: true}\n    operation: {process: /x}\n    expect: {allowed: true}\n`,
      'RT2004',
      6,
      /a workload is either/,
    ],
    [
      'wrong apiVersion',
      'apiVersion: v1\nkind: RuntimePolicyTest\nmetadata: {name: s}\ncases: []\n',
      'RT2004',
      1,
      /apiVersion: must be "test\.security\.runtime\.com\/v1"/,
    ],
  ];
  for (const [name, text, code, line, message] of cases) {
    it(`${name}: ${code} at line ${line}`, () => {
      const r = readTestSuites([{ file: 's.yaml', text }]);
      const d = r.diagnostics.find((x) => x.code === code);
      assert.ok(d, JSON.stringify(r.diagnostics));
      assert.equal(d.start?.line, line, JSON.stringify(d));
      assert.match(d.message, message);
      assert.equal(r.cases.length, 0);
    });
  }

  it('a valid case becomes a request with its position', () => {
    const r = readTestSuites([
      {
        file: 's.yaml',
        text: CASE(
          '    operation: {file: /etc/x, write: true, source: /bin/sh}\n    expect: {allowed: false}\n',
        ),
      },
    ]);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.cases.length, 1);
    const c = r.cases[0];
    assert.equal(c?.line, 5);
    assert.deepEqual(c?.request.operation, {
      operation: 'File',
      resource: '/etc/x',
      write: true,
      owner: false,
      executable: '/bin/sh',
    });
    assert.deepEqual(c?.request.workload, {
      kind: 'container',
      namespace: 'shop',
      labels: { app: 'web' },
      nodeLabels: {},
    });
  });
});

describe('rtctl test (CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rtctl-test-'));
    for (const f of readdirSync(EXAMPLES)) copyFileSync(path.join(EXAMPLES, f), path.join(dir, f));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the examples suite passes, every policy has a case (--require-tests)', async () => {
    const r = await runRtctl(['test', '--require-tests', 'policies/examples']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^PASS examples › apt is blocked in the web pods of shop$/m);
    assert.match(r.stdout, /^15 passed, 0 failed\n$/m);
  });

  it('lint passes the suite over: lint of the examples is unchanged by it', async () => {
    const r = await runRtctl(['lint', '--verbose', 'policies/examples']);
    assert.equal(r.code, 0, r.stdout);
    assert.match(
      r.stdout,
      /examples\.rtctl-test\.yaml:3:1: info RT1011 kind: test\.security\.runtime\.com\/v1 RuntimePolicyTest is not checked by rtctl; passed over/,
    );
  });

  it('a wrong expectation fails with file:line:col, what differs and the deciding rule', async () => {
    const suite = path.join(dir, 'examples.rtctl-test.yaml');
    const text = readFileSync(suite, 'utf8');
    writeFileSync(
      suite,
      text.replace(
        'expect: { allowed: true, policy: audit-credentials, action: Audit }',
        'expect: { allowed: false, policy: audit-credentials, action: Block }',
      ),
    );
    try {
      const r = await runRtctl(['test', dir]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /^FAIL .*examples\.rtctl-test\.yaml:\d+:5: examples › the ledger's keys are audited, not blocked: expected denied, got allowed; expected action Block, got Audit$/m,
      );
      assert.match(
        r.stdout,
        /decided: allowed by audit-credentials \(alert Audit\) at .*audit-credentials\.yaml:13:9 \(File Audit directory \/etc\/ledger\/keys\/ \(recursive\)\)/,
      );
      assert.match(r.stdout, /^14 passed, 1 failed$/m);
      const json = JSON.parse((await runRtctl(['test', '-f', 'json', dir])).stdout) as {
        passed: number;
        failed: number;
        cases: Array<{ passed: boolean; actual: { policy: string } }>;
      };
      assert.equal(json.failed, 1);
      assert.equal(json.passed, 14);
      const junit = await runRtctl(['test', '-f', 'junit', dir]);
      assert.equal(junit.code, 1);
      assert.equal(XMLValidator.validate(junit.stdout), true);
      assert.match(junit.stdout, /<testsuites name="rtctl test" tests="15" failures="1" errors="0">/);
      assert.match(
        junit.stdout,
        /<failure message="expected denied, got allowed; expected action Block, got Audit" type="decision">/,
      );
    } finally {
      writeFileSync(suite, text);
    }
  });

  it('--require-tests fails when a policy has no case; without it the gap is a note', async () => {
    const suite = path.join(dir, 'examples.rtctl-test.yaml');
    const text = readFileSync(suite, 'utf8');
    // Keep only the first case: most policies then have none.
    const first = text.slice(0, text.indexOf('  - name: apk'));
    writeFileSync(suite, first);
    try {
      const loose = await runRtctl(['test', dir]);
      assert.equal(loose.code, 0, loose.stdout + loose.stderr);
      assert.match(
        loose.stdout,
        /^NOTE .*audit-credentials\.yaml:\d+: RuntimePolicy payments\/audit-credentials has no test case$/m,
      );
      const strict = await runRtctl(['test', '--require-tests', dir]);
      assert.equal(strict.code, 1);
      assert.match(
        strict.stdout,
        /^FAIL .*host-protect-kubelet\.yaml:\d+: RuntimeHostPolicy host-protect-kubelet has no test case$/m,
      );
      assert.match(strict.stdout, /1 passed, 0 failed, 5 policies without a case/);
      const junit = await runRtctl(['test', '--require-tests', '-f', 'junit', dir]);
      assert.match(junit.stdout, /<testsuite name="untested policies" tests="5" failures="5" errors="0">/);
    } finally {
      writeFileSync(suite, text);
    }
  });

  it('a bad suite is exit 1 with the diagnostic; no suite at all is exit 1, not a silent pass', async () => {
    const bad = mkdtempSync(path.join(os.tmpdir(), 'rtctl-test-bad-'));
    try {
      writeFileSync(
        path.join(bad, 's.yaml'),
        CASE('    operation: {process: /x}\n    expect: {allowed: true, polcy: x}\n'),
      );
      const r = await runRtctl(['test', bad]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /s\.yaml:8:29: error RT2003 cases\[0\]\.expect\.polcy: unknown field "polcy"/);
      const none = await runRtctl(['test', path.join(EXAMPLES, 'namespaces.yaml')]);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /no test suite \(kind RuntimePolicyTest\) in .*; nothing was tested/);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
