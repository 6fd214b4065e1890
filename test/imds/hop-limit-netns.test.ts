// The hop limit on the wire. The test builds its own network namespaces: a server namespace holding
// 169.254.169.254 (on its loopback) and running `rtctl imds serve`, a router namespace that forwards
// between two veth links, and a client namespace one routed hop away (like a pod behind the node). Node
// processes run inside them through `ip netns exec`. Addresses on the veth links are documentation ranges
// (192.0.2.0/24, 198.51.100.0/24) that exist only inside these namespaces. Everything is removed afterwards.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'mocha';
import { loadSocketTtl } from '../../imds/socket-ttl.js';
import { hasCommand, isRoot, requirePrereqs } from '../support/prereq.js';

const execFileAsync = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const CLI = path.join(HERE, 'support', 'run-imds-cli.ts');
const PROBE = path.join(HERE, 'support', 'probe.ts');
const ID = 'i-0123456789abcdef0';
const IMDS = 'http://169.254.169.254';
const MANAGE = 'http://127.0.0.1:9180';
const PREFIX = 'rtimds-';
const NS = {
  server: `${PREFIX}${process.pid}-srv`,
  router: `${PREFIX}${process.pid}-rtr`,
  client: `${PREFIX}${process.pid}-cli`,
};
/** The management token file the server writes (set once the temporary folder exists). */
let tokenFile = '';

/** How long a client waits for a token before calling it a timeout (the real SDKs wait about 1 s). */
const TIMEOUT_MS = 3000;

interface ProbeResult {
  status?: number;
  body?: string;
  error?: string;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function listNamespaces(): string[] {
  try {
    return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .filter((n) => n !== '');
  } catch {
    return [];
  }
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes our namespaces, and those left by earlier runs whose process is gone. */
function removeNamespaces(): void {
  for (const name of listNamespaces()) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    const ours = Object.values(NS).includes(name);
    if (ours || (Number.isInteger(pid) && !isPidAlive(pid))) {
      // Processes left inside (a server of a run that was killed) would keep the namespace alive.
      try {
        const pids = execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8' })
          .split('\n')
          .filter((l) => /^\d+$/.test(l));
        for (const p of pids) process.kill(Number(p), 'SIGKILL');
      } catch {
        // none left, or already gone
      }
      try {
        ip('netns', 'del', name);
      } catch {
        // already gone
      }
    }
  }
}

function createTopology(): void {
  for (const ns of Object.values(NS)) {
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  // server <-> router
  ip('link', 'add', 's0', 'netns', NS.server, 'type', 'veth', 'peer', 'name', 'r0', 'netns', NS.router);
  // client <-> router
  ip('link', 'add', 'c0', 'netns', NS.client, 'type', 'veth', 'peer', 'name', 'r1', 'netns', NS.router);
  ip('-n', NS.server, 'addr', 'add', '192.0.2.2/24', 'dev', 's0');
  ip('-n', NS.server, 'addr', 'add', '169.254.169.254/32', 'dev', 'lo');
  ip('-n', NS.server, 'link', 'set', 's0', 'up');
  ip('-n', NS.server, 'route', 'add', 'default', 'via', '192.0.2.1');
  ip('-n', NS.router, 'addr', 'add', '192.0.2.1/24', 'dev', 'r0');
  ip('-n', NS.router, 'addr', 'add', '198.51.100.1/24', 'dev', 'r1');
  ip('-n', NS.router, 'link', 'set', 'r0', 'up');
  ip('-n', NS.router, 'link', 'set', 'r1', 'up');
  ip('-n', NS.router, 'route', 'add', '169.254.169.254/32', 'via', '192.0.2.2');
  execFileSync('ip', ['netns', 'exec', NS.router, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  ip('-n', NS.client, 'addr', 'add', '198.51.100.2/24', 'dev', 'c0');
  ip('-n', NS.client, 'link', 'set', 'c0', 'up');
  ip('-n', NS.client, 'route', 'add', 'default', 'via', '198.51.100.1');
}

async function probe(
  ns: string,
  input: { method: string; path: string; headers?: Record<string, string>; url?: string },
): Promise<ProbeResult> {
  const request = {
    method: input.method,
    url: `${input.url ?? IMDS}${input.path}`,
    headers: input.headers ?? {},
    timeoutMs: TIMEOUT_MS,
  };
  const { stdout } = await execFileAsync(
    'ip',
    ['netns', 'exec', ns, process.execPath, '--import', 'tsx', PROBE, JSON.stringify(request)],
    { cwd: REPO, timeout: 30000 },
  );
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ProbeResult;
}

const putToken = (ns: string) =>
  probe(ns, {
    method: 'PUT',
    path: '/latest/api/token',
    headers: { 'X-cloud-metadata-token-ttl-seconds': '300' },
  });
const getInstanceId = (ns: string, token?: string) =>
  probe(ns, {
    method: 'GET',
    path: '/latest/meta-data/instance-id',
    headers: token === undefined ? {} : { 'X-cloud-metadata-token': token },
  });

/** Runs modify-instance-metadata-options through the CLI inside the server namespace and waits for `applied`. */
async function modify(flags: string[]): Promise<void> {
  const { stdout } = await execFileAsync(
    'ip',
    [
      'netns',
      'exec',
      NS.server,
      process.execPath,
      '--import',
      'tsx',
      CLI,
      'imds',
      'modify-instance-metadata-options',
      '--endpoint',
      MANAGE,
      '--instance-id',
      ID,
      '--manage-token-file',
      tokenFile,
      ...flags,
    ],
    { cwd: REPO, timeout: 30000 },
  );
  assert.equal(
    (JSON.parse(stdout) as { InstanceMetadataOptions: { State: string } }).InstanceMetadataOptions.State,
    'pending',
  );
  for (let i = 0; i < 20; i++) {
    const d = await probe(NS.server, {
      method: 'GET',
      url: MANAGE,
      path: `/instances/${ID}/metadata-options`,
      headers: { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` },
    });
    if (
      d.body !== undefined &&
      (JSON.parse(d.body) as { InstanceMetadataOptions: { State: string } }).InstanceMetadataOptions.State ===
        'applied'
    )
      return;
  }
  assert.fail('options never reached State applied');
}

describe('imds hop limit across a routed hop (network namespaces: server, router, client)', function () {
  this.timeout(120000);
  let server: ChildProcess | undefined;
  let dir: string | undefined;

  before(async function () {
    const addon = isRoot() ? loadSocketTtl() : { ok: false as const, error: 'not root' };
    requirePrereqs(this, [
      [isRoot(), 'network namespaces need root'],
      [hasCommand('ip'), 'iproute2 (ip) is not installed'],
      [hasCommand('openssl'), 'openssl is not installed'],
      [hasCommand('curl'), 'curl is not installed'],
      [addon.ok, `ip-ttl addon: ${addon.ok ? '' : addon.error}`],
    ]);
    removeNamespaces();
    createTopology();
    dir = mkdtempSync(path.join(tmpdir(), 'rtctl-imds-netns-'));
    tokenFile = path.join(dir, 'run', 'manage-token');
    const config = path.join(dir, 'imds.yaml');
    writeFileSync(
      config,
      `applyDelayMs: 0\ninstances:\n  - instanceId: ${ID}\n    metadataOptions: { httpTokens: optional, httpPutResponseHopLimit: 1 }\n`,
    );
    // `timeout` bounds the server's life even if this test process dies before its after hook.
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        NS.server,
        'timeout',
        '600',
        process.execPath,
        '--import',
        'tsx',
        CLI,
        'imds',
        'serve',
        '--config',
        config,
        '--listen',
        '169.254.169.254:80',
        '--manage-listen',
        '127.0.0.1:9180',
        '--manage-token-file',
        tokenFile,
      ],
      { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    server = child;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`server not ready: ${log}`)), 20000);
      child.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('"imds ready"')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited ${code}: ${log}`));
      });
    });
  });

  after(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server?.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    removeNamespaces();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(
      listNamespaces().filter((n) => Object.values(NS).includes(n)),
      [],
      'namespaces removed',
    );
  });

  it('hop limit 1, tokens optional: a client in the server namespace (on the instance) gets a token and uses it', async () => {
    const put = await putToken(NS.server);
    assert.equal(put.status, 200, JSON.stringify(put));
    assert.equal((await getInstanceId(NS.server, put.body)).body, ID);
  });
  it('hop limit 1, tokens optional: the client behind the router times out on the token PUT', async () => {
    assert.deepEqual(await putToken(NS.client), { error: 'timeout' });
  });
  it('hop limit 1, tokens optional: a v1 GET from behind the router is served (GETs are unaffected)', async () => {
    const res = await getInstanceId(NS.client);
    assert.equal(res.status, 200, JSON.stringify(res));
    assert.equal(res.body, ID);
  });
  it('a client behind the router fetches the identity document with curl and verifies both signatures with openssl against the certificate the server prints', async () => {
    assert.ok(dir !== undefined);
    const work = path.join(dir, 'client');
    execFileSync('mkdir', ['-p', work]);
    const { stdout: pem } = await execFileAsync(
      'ip',
      [
        'netns',
        'exec',
        NS.server,
        process.execPath,
        '--import',
        'tsx',
        CLI,
        'imds',
        'identity-certificate',
        '--endpoint',
        MANAGE,
      ],
      { cwd: REPO, timeout: 30000 },
    );
    writeFileSync(path.join(work, 'certificate'), pem);
    const inClient = (cmd: string, ...args: string[]) =>
      execFileSync('ip', ['netns', 'exec', NS.client, cmd, ...args], {
        cwd: work,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30000,
      });
    const base = `${IMDS}/latest/dynamic/instance-identity`;
    for (const name of ['document', 'signature', 'pkcs7'])
      inClient('curl', '-sSf', '--max-time', '5', '-o', name, `${base}/${name}`);
    assert.equal(
      (JSON.parse(readFileSync(path.join(work, 'document'), 'utf8')) as { instanceId: string }).instanceId,
      ID,
    );
    inClient('openssl', 'x509', '-in', 'certificate', '-pubkey', '-noout', '-out', 'key');
    inClient('openssl', 'base64', '-d', '-A', '-in', 'signature', '-out', 'signature.bin');
    assert.match(
      inClient(
        'openssl',
        'dgst',
        '-sha256',
        '-verify',
        'key',
        '-signature',
        'signature.bin',
        'document',
      ).toString(),
      /Verified OK/,
    );
    writeFileSync(
      path.join(work, 'pkcs7.pem'),
      `-----BEGIN PKCS7-----\n${readFileSync(path.join(work, 'pkcs7'), 'utf8')}\n-----END PKCS7-----\n`,
    );
    inClient(
      'openssl',
      'smime',
      '-verify',
      '-in',
      'pkcs7.pem',
      '-inform',
      'PEM',
      '-content',
      'document',
      '-certfile',
      'certificate',
      '-noverify',
      '-out',
      'verified',
    );
    assert.equal(
      readFileSync(path.join(work, 'verified'), 'utf8'),
      readFileSync(path.join(work, 'document'), 'utf8'),
    );
    // A document changed by anyone but the signer fails both checks.
    writeFileSync(
      path.join(work, 'forged'),
      readFileSync(path.join(work, 'document'), 'utf8').replace('123456789012', '999999999999'),
    );
    assert.throws(() =>
      inClient('openssl', 'dgst', '-sha256', '-verify', 'key', '-signature', 'signature.bin', 'forged'),
    );
    assert.throws(() =>
      inClient(
        'openssl',
        'smime',
        '-verify',
        '-in',
        'pkcs7.pem',
        '-inform',
        'PEM',
        '-content',
        'forged',
        '-certfile',
        'certificate',
        '-noverify',
      ),
    );
  });
  it('hop limit 2 (modified through the CLI): the client behind the router gets a token and uses it', async () => {
    await modify(['--http-put-response-hop-limit', '2']);
    const put = await putToken(NS.client);
    assert.equal(put.status, 200, JSON.stringify(put));
    assert.equal((await getInstanceId(NS.client, put.body)).body, ID);
  });
  it('tokens required, hop limit 2: a v1 GET from behind the router gets 401, a token PUT is issued', async () => {
    await modify(['--http-tokens', 'required']);
    const v1 = await getInstanceId(NS.client);
    assert.equal(v1.status, 401);
    assert.match(v1.body ?? '', /<title>401 - Unauthorized<\/title>/);
    const put = await putToken(NS.client);
    assert.equal(put.status, 200);
    assert.equal((await getInstanceId(NS.client, put.body)).status, 200);
  });
  it('tokens required, hop limit 1: behind the router the token PUT times out and v1 gets 401 (pods blocked); the instance itself still gets a token', async () => {
    await modify(['--http-put-response-hop-limit', '1']);
    assert.deepEqual(await putToken(NS.client), { error: 'timeout' });
    assert.equal((await getInstanceId(NS.client)).status, 401);
    const local = await putToken(NS.server);
    assert.equal(local.status, 200);
    assert.equal((await getInstanceId(NS.server, local.body)).body, ID);
  });
  it('http-endpoint disabled: 403 from behind the router too', async () => {
    await modify(['--http-endpoint', 'disabled']);
    const res = await getInstanceId(NS.client);
    assert.equal(res.status, 403);
    assert.match(res.body ?? '', /<title>403 - Forbidden<\/title>/);
  });
});
