// The imds CLI as real processes: `imds serve` with a config file (loopback ports), then
// `imds modify-instance-metadata-options` against its management endpoint, and their errors and exit codes.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'mocha';
import { sendRequest } from './support/harness.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUNNER = path.join(HERE, 'support', 'run-imds-cli.ts');
const REPO = path.resolve(HERE, '../..');
const ID = 'i-0123456789abcdef0';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The management token file every server of this file writes and every client reads (set in `before`). */
let tokenFile = '';

/** Runs the CLI; commands that talk to the management endpoint get --manage-token-file unless given one. */
function runCli(args: string[]): Promise<Run> {
  const needsToken =
    (args.includes('modify-instance-metadata-options') || args.includes('trigger') || args[1] === 'serve') &&
    !args.includes('--manage-token-file') &&
    !args.includes('--help');
  const full = needsToken ? [...args, '--manage-token-file', tokenFile] : args;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, ...full], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `imds serve` and resolves with the addresses from its "imds ready" log line. */
function startServe(args: string[]): Promise<{ child: ChildProcess; metadata: string; manage: string }> {
  return new Promise((resolve, reject) => {
    const withToken = args.includes('--manage-token-file')
      ? args
      : [...args, '--manage-token-file', tokenFile];
    const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, 'imds', 'serve', ...withToken], {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`serve not ready: ${buffer}`)), 15000);
    child.stderr?.on('data', (d: Buffer) => {
      buffer += d.toString();
      for (const line of buffer.split('\n')) {
        if (!line.includes('"imds ready"')) continue;
        const rec = JSON.parse(line) as { metadata: string[]; manage: string };
        clearTimeout(timer);
        resolve({ child, metadata: `http://${rec.metadata[0] ?? ''}`, manage: `http://${rec.manage}` });
        return;
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${buffer}`));
    });
  });
}

describe('imds CLI (real processes on loopback)', function () {
  this.timeout(30000);
  let dir: string;
  let serve: { child: ChildProcess; metadata: string; manage: string };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rtctl-imds-cli-'));
    tokenFile = path.join(dir, 'run', 'manage-token');
    const config = path.join(dir, 'imds.yaml');
    writeFileSync(config, `applyDelayMs: 0\ninstances:\n  - instanceId: ${ID}\n    userData: hello\n`);
    serve = await startServe([
      '--config',
      config,
      '--listen',
      '127.0.0.1:0',
      '--manage-listen',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ]);
  });
  after(() => {
    serve.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve: --listen overrides the default 169.254.169.254:80 and the management endpoint is on its own port', async () => {
    assert.match(serve.metadata, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(serve.metadata, serve.manage);
    const res = await sendRequest(serve.metadata, 'GET', '/latest/user-data');
    assert.equal(res.body, 'hello');
  });

  it('modify-instance-metadata-options prints the options object with State pending (exit 0), then it applies', async () => {
    const r = await runCli([
      'imds',
      'modify-instance-metadata-options',
      '--endpoint',
      serve.manage,
      '--instance-id',
      ID,
      '--http-tokens',
      'required',
      '--http-put-response-hop-limit',
      '2',
      '--instance-metadata-tags',
      'enabled',
      '--http-endpoint',
      'enabled',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      InstanceId: ID,
      InstanceMetadataOptions: {
        State: 'pending',
        HttpTokens: 'required',
        HttpPutResponseHopLimit: 2,
        HttpEndpoint: 'enabled',
        HttpProtocolIpv6: 'disabled',
        InstanceMetadataTags: 'enabled',
      },
    });
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      await new Promise((res) => setTimeout(res, 20));
      status = (await sendRequest(serve.metadata, 'GET', '/latest/meta-data/instance-id')).status;
    }
    assert.equal(status, 401, 'tokens are required once applied');
    const described = await sendRequest(serve.manage, 'GET', `/instances/${ID}/metadata-options`, {
      authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}`,
    });
    assert.equal(
      (JSON.parse(described.body) as { InstanceMetadataOptions: { State: string } }).InstanceMetadataOptions
        .State,
      'applied',
    );
  });

  const failures: { name: string; args: string[]; message: RegExp }[] = [
    {
      name: 'an invalid value',
      args: ['--instance-id', ID, '--http-tokens', 'sometimes'],
      message: /InvalidParameterValue: Value \(sometimes\) for parameter http-tokens is invalid/,
    },
    {
      name: 'a hop limit that is not a number',
      args: ['--instance-id', ID, '--http-put-response-hop-limit', 'two'],
      message: /InvalidParameterValue: .*http-put-response-hop-limit.*1 to 64/,
    },
    {
      name: 'an unknown instance',
      args: ['--instance-id', 'i-0fffffffffffffff0', '--http-tokens', 'required'],
      message: /InvalidInstanceID\.NotFound: The instance ID 'i-0fffffffffffffff0' does not exist/,
    },
    {
      name: 'no option to change',
      args: ['--instance-id', ID],
      message: /MissingParameter: At least one of/,
    },
  ];
  for (const f of failures) {
    it(`modify with ${f.name} → exit 2 and a clear message`, async () => {
      const r = await runCli([
        'imds',
        'modify-instance-metadata-options',
        '--endpoint',
        serve.manage,
        ...f.args,
      ]);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, f.message);
    });
  }
  it('modify without --instance-id → exit 2 (usage)', async () => {
    const r = await runCli([
      'imds',
      'modify-instance-metadata-options',
      '--endpoint',
      serve.manage,
      '--http-tokens',
      'required',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--instance-id/);
  });
  it('modify against an endpoint where nothing listens → exit 2, names the endpoint', async () => {
    const r = await runCli([
      'imds',
      'modify-instance-metadata-options',
      '--endpoint',
      'http://127.0.0.1:1',
      '--instance-id',
      ID,
      '--http-tokens',
      'required',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /cannot reach the management endpoint: http:\/\/127\.0\.0\.1:1\//);
  });
  it('serve with an invalid config → exit 2 with file:line:col and the code', async () => {
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'instances:\n  - metadataOptions:\n      httpTokens: sometimes\n');
    const r = await runCli(['imds', 'serve', '--config', bad]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(
        `${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:19: imds-config-schema: .*httpTokens must be one of "optional", "required"`,
      ),
    );
  });
  it('serve with the management endpoint on the metadata address → exit 2', async () => {
    const r = await runCli([
      'imds',
      'serve',
      '--listen',
      '127.0.0.1:18999',
      '--manage-listen',
      '127.0.0.1:18999',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /imds-config-conflict: 127\.0\.0\.1:18999 is already used by \/manageListen/);
  });
  it('serve with a malformed --listen → exit 2', async () => {
    const r = await runCli(['imds', 'serve', '--listen', 'localhost']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--listen: "localhost" is not host:port/);
  });
  it('serve stops cleanly on SIGTERM (exit 0) and removes its management token file', async () => {
    const own = path.join(dir, 'own', 'token');
    const s = await startServe([
      '--listen',
      '127.0.0.1:0',
      '--manage-listen',
      '127.0.0.1:0',
      '--manage-token-file',
      own,
    ]);
    assert.ok(statSync(own).isFile());
    const code = await new Promise<number | null>((resolve) => {
      s.child.on('exit', (c) => resolve(c));
      s.child.kill('SIGTERM');
    });
    assert.equal(code, 0);
    assert.throws(() => statSync(own), /ENOENT/);
  });
  it('serve writes the management token 0600 in a 0700 folder; the endpoint refuses a request without it (401)', async () => {
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(tokenFile)).mode & 0o777, 0o700);
    assert.match(readFileSync(tokenFile, 'utf8'), /^[A-Za-z0-9_-]{43}\n$/);
    const res = await sendRequest(serve.manage, 'GET', `/instances/${ID}/metadata-options`);
    assert.equal(res.status, 401);
  });
  it('modify with another token file → exit 2 AuthFailure, nothing changes', async () => {
    const wrong = path.join(dir, 'wrong-token');
    writeFileSync(wrong, 'not-the-token\n', { mode: 0o600 });
    const r = await runCli([
      'imds',
      'modify-instance-metadata-options',
      '--endpoint',
      serve.manage,
      '--manage-token-file',
      wrong,
      '--instance-id',
      ID,
      '--http-endpoint',
      'disabled',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /AuthFailure: the management token is not valid/);
    assert.notEqual((await sendRequest(serve.metadata, 'GET', '/latest/meta-data/instance-id')).status, 403);
  });
  it('modify with a missing token file → exit 2 naming --manage-token-file', async () => {
    const r = await runCli([
      'imds',
      'modify-instance-metadata-options',
      '--manage-token-file',
      path.join(dir, 'absent'),
      '--instance-id',
      ID,
      '--http-tokens',
      'required',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /cannot read the management token .*--manage-token-file/);
  });
  it('trigger rebalance-recommendation → exit 0, and the recommendation is served', async () => {
    const r = await runCli([
      'imds',
      'trigger',
      'rebalance-recommendation',
      '--endpoint',
      serve.manage,
      '--instance-id',
      ID,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { InstanceId: string }).InstanceId, ID);
    const token = (
      await sendRequest(serve.metadata, 'PUT', '/latest/api/token', {
        'X-cloud-metadata-token-ttl-seconds': '60',
      })
    ).body;
    const res = await sendRequest(
      serve.metadata,
      'GET',
      '/latest/meta-data/events/recommendations/rebalance',
      {
        'X-cloud-metadata-token': token,
      },
    );
    assert.equal(res.status, 200);
    assert.match(res.body, /"noticeTime": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/);
  });
  it('trigger with a bad value → exit 2 with the field named', async () => {
    const r = await runCli([
      'imds',
      'trigger',
      'scheduled-event',
      '--endpoint',
      serve.manage,
      '--instance-id',
      ID,
      '--code',
      'reboot-now',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /InvalidParameterValue: code: code must be one of instance-reboot/);
  });
  it('identity-certificate prints the PEM certificate', async () => {
    const r = await runCli(['imds', 'identity-certificate', '--endpoint', serve.manage]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\s*$/);
  });
  it('serve --help lists every metadata path and management operation', async () => {
    const r = await runCli(['imds', 'serve', '--help']);
    assert.equal(r.code, 0);
    for (const p of [
      '/latest/api/token',
      '/latest/user-data',
      '/latest/meta-data/iam/security-credentials/<role>',
      '/latest/meta-data/spot/instance-action',
      '/latest/meta-data/spot/termination-time',
      '/latest/meta-data/events/recommendations/rebalance',
      '/latest/meta-data/events/maintenance/scheduled',
      '/latest/meta-data/autoscaling/target-lifecycle-state',
      '/latest/dynamic/instance-identity/document',
      '/latest/dynamic/instance-identity/signature',
      '/latest/dynamic/instance-identity/pkcs7',
      '/modify-instance-metadata-options',
      '/instances/<id>/triggers',
      '/identity-certificate',
      '--manage-token-file',
    ])
      assert.ok(r.stdout.includes(p), p);
  });
});
