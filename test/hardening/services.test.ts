// Quiet on real services: nginx, redis and PostgreSQL (Debian packages, in containers of the Debian root file
// system) start through an entrypoint script as their images do, serve a client's normal traffic (HTTP GETs,
// SET/GET, SQL queries) and stop, under the hardening profiles in block posture on the fanotify plane.
// baseline: zero Block alerts. restricted: the Block alerts name what each service needed, which must be
// exactly what the example Allow policies in policies/hardening/allow/ grant; restricted plus those Allow
// policies: zero Block alerts again. The client runs in a namespace no policy selects. One enforcer and one
// set of containers serve every phase; outcomes are read through `rtctl logs -n <ns> --json`.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildCatalog,
  policyForApply,
  selectProfile,
  type BundlePolicy,
} from '../../compiler/bundles/catalog.js';
import { readBundleSources } from '../../compiler/bundles/load.js';
import { toYaml } from '../../compiler/emit/yaml-text.js';
import type { AlertRecord } from '../../enforcer/alerts/alert-record.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { REPO_ROOT } from '../support/paths.js';
import { containerdPrereqs, startContainerd, type Containerd } from '../enforcer/support/containerd.js';
import {
  readLogs,
  startEnforcer,
  stopHelper,
  waitForStatus,
  type EnforcerProcess,
} from '../enforcer/support/enforcer-process.js';
import {
  execIn,
  ensureDebianImageTar,
  importDebianImage,
  removeDebianContainer,
  resolveUser,
  runDebianContainer,
} from './support/debian-image.js';
import { ensureRootfs } from './support/rootfs.js';

const NS = 'hard-svc';
const CLIENT_NS = 'hard-client';
const PG = '/usr/lib/postgresql/15/bin';
const ROOT = join(REPO_ROOT, 'policies', 'hardening');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

interface Service {
  name: 'nginx' | 'redis' | 'postgres';
  container: string;
  /** The comm of the server process, to stop it from the host as the kubelet stops a container. */
  comm: string;
  /** The entrypoint run in the container (a script, as images start their server). */
  entrypoint: string[];
  user?: string;
  /** Client commands of normal traffic, with what their output must contain. */
  traffic: { argv: string[]; expect: RegExp }[];
  /** A client command that succeeds once the server serves. */
  ready: string[];
  /** A client command that describes the server (for failure messages). */
  diagnose: string[];
}

describe('hardening profiles are quiet on real services (nginx, redis, postgresql; fanotify)', function () {
  this.timeout(180000);
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  let policyDir = '';
  let stateDir = '';
  const sources = readBundleSources(ROOT);
  const catalog = buildCatalog(sources.filter((s) => !s.file.startsWith('allow/')));
  const allowFiles = sources.filter((s) => s.file.startsWith('allow/'));
  const services: Service[] = [];
  /** Block alerts seen under restricted without the Allow policies, per service. */
  const needed = new Map<string, Set<string>>();

  function setPolicies(files: Record<string, string>): Promise<unknown> {
    const url = enforcer?.url ?? '';
    return (async () => {
      const before = (await waitForStatus(url, () => true)).generation;
      for (const f of readdirSync(policyDir)) rmSync(join(policyDir, f));
      for (const [name, text] of Object.entries(files)) writeFileSync(join(policyDir, name), text);
      await waitForStatus(url, (s) => s.generation > before, 30000);
    })();
  }

  function profileFiles(policies: readonly BundlePolicy[]): Record<string, string> {
    const out: Record<string, string> = {
      'namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NS}\n  annotations:\n    runtime-file-posture: block\n    runtime-network-posture: block\n    runtime-capabilities-posture: block\n`,
    };
    for (const p of policies)
      if (p.kind === 'RuntimePolicy') out[`${p.name}.yaml`] = toYaml(policyForApply(p, NS));
    return out;
  }

  function allowPolicyFiles(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of allowFiles)
      out[`allow-${s.file.slice('allow/'.length)}`] = s.text.replace(
        /^metadata:\n/m,
        `metadata:\n  namespace: ${NS}\n`,
      );
    return out;
  }

  /** Host pids of processes with this comm in the container's pid namespace. */
  function serverPids(containerInitPid: number, comm: string): number[] {
    const ns = readlinkSync(`/proc/${containerInitPid}/ns/pid`);
    const pids: number[] = [];
    for (const e of readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        if (readlinkSync(`/proc/${e}/ns/pid`) !== ns) continue;
        if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() === comm) pids.push(Number(e));
      } catch {
        // gone
      }
    }
    return pids;
  }

  async function initPid(id: string): Promise<number> {
    const tasks = await cd?.ctr(['tasks', 'ls']);
    const row = tasks?.stdout.split('\n').find((l) => l.split(/\s+/)[0] === id);
    return Number(row?.split(/\s+/)[1] ?? 0);
  }

  async function client(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    if (!cd) throw new Error('containerd not started');
    return execIn(cd, 'client-c', argv);
  }

  /** Starts a service, runs its traffic, stops it; returns its Block alerts. */
  async function lifecycle(svc: Service, mustServe: boolean): Promise<AlertRecord[]> {
    if (!cd || !enforcer) throw new Error('not started');
    const started = Date.now();
    const r = await execIn(cd, svc.container, svc.entrypoint, {
      detach: true,
      ...(svc.user === undefined ? {} : { user: svc.user }),
    });
    assert.equal(r.code, 0, r.stderr);
    let ready = false;
    // A service expected to be denied gets a short wait; one that must serve gets up to 30 s.
    for (let i = 0; i < (mustServe ? 150 : 15) && !ready; i++) {
      ready = (await client(svc.ready)).code === 0;
      if (!ready) await sleep(200);
    }
    if (mustServe) {
      assert.ok(ready, `${svc.name} serves`);
      for (const t of svc.traffic) {
        const out = await client(t.argv);
        assert.equal(out.code, 0, `${t.argv.join(' ')}: ${out.stderr}`);
        if (!t.expect.test(out.stdout)) {
          // Say which server answered, to tell a wrong answer from an answer by another server on the port.
          const who = await client(svc.diagnose);
          assert.fail(
            `${t.argv.join(' ')}: ${JSON.stringify(out.stdout)} does not match ${String(t.expect)}; server: ${who.stdout}${who.stderr}`,
          );
        }
      }
    }
    // Stop as the kubelet does: a signal from outside the container, then wait for the process to go.
    const pid = await initPid(svc.container);
    for (const p of serverPids(pid, svc.comm)) {
      try {
        process.kill(p, 'SIGTERM');
      } catch (err) {
        // A worker the master stopped between the listing and this signal is already gone.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    }
    for (let i = 0; i < 150 && serverPids(pid, svc.comm).length > 0; i++) await sleep(200);
    assert.deepEqual(serverPids(pid, svc.comm), [], `${svc.name} stopped`);
    await sleep(500); // alerts of the last accesses are published asynchronously; rtctl logs reads what is held
    return readLogs(enforcer.url, ['-n', NS]).filter(
      (a) => a.Timestamp * 1000 >= started - 1000 && a.PodName === `${svc.name}-0` && a.Action === 'Block',
    );
  }

  before(async function () {
    this.timeout(30 * 60 * 1000);
    requirePrereqs(this, [...containerdPrereqs(), [hasCommand('mmdebstrap'), 'mmdebstrap not installed']]);
    const imageTar = await ensureDebianImageTar(await ensureRootfs());
    work = mkdtempSync(join(tmpdir(), 'rtctl-hardening-svc-'));
    policyDir = join(work, 'policies');
    stateDir = join(work, 'state');
    mkdirSync(policyDir);
    mkdirSync(stateDir);
    const pgdata = join(work, 'pgdata');
    mkdirSync(pgdata);
    cd = await startContainerd();
    await importDebianImage(cd, imageTar);
    const [httpPort, redisPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    for (const [name, mounts] of [
      ['nginx', []],
      ['redis', []],
      ['postgres', [{ source: pgdata, destination: '/pgdata', readOnly: false }]],
    ] as const) {
      await runDebianContainer(cd, {
        id: `${name}-c`,
        pod: `${name}-0`,
        namespace: NS,
        container: name,
        labels: { app: name },
        mounts: [...mounts],
        netHost: true,
      });
    }
    await runDebianContainer(cd, {
      id: 'client-c',
      pod: 'client-0',
      namespace: CLIENT_NS,
      container: 'client',
      netHost: true,
    });
    // Entrypoint scripts and configuration, written before enforcement (as an image build would).
    const setup: Record<string, string> = {
      'nginx-c': `set -e
mkdir -p /etc/rtctl
cat > /etc/rtctl/nginx.conf <<'EOF'
worker_processes 1;
pid /run/nginx-rtctl.pid;
error_log stderr;
events {}
http {
  access_log /var/log/nginx/access.log;
  server {
    listen 127.0.0.1:${httpPort};
    root /var/www/html;
    index index.nginx-debian.html;
  }
}
EOF
printf '#!/bin/bash\\nset -e\\nexec /usr/sbin/nginx -c /etc/rtctl/nginx.conf -g "daemon off;"\\n' > /usr/local/bin/entrypoint.sh
chmod 755 /usr/local/bin/entrypoint.sh`,
      'redis-c': `set -e
printf '#!/bin/sh\\nexec /usr/bin/redis-server --bind 127.0.0.1 --port ${redisPort} --save "" --appendonly no --dir /tmp\\n' > /usr/local/bin/entrypoint.sh
chmod 755 /usr/local/bin/entrypoint.sh`,
      'postgres-c': `set -e
cp -a /var/lib/postgresql/15/main/. /pgdata/
printf 'local all all trust\\nhost all all 127.0.0.1/32 trust\\n' > /pgdata/pg_hba.conf
chown -R postgres:postgres /pgdata && chmod 700 /pgdata
printf '#!/bin/bash\\nexec ${PG}/postgres -D /pgdata -c config_file=/etc/postgresql/15/main/postgresql.conf -c data_directory=/pgdata -c hba_file=/pgdata/pg_hba.conf -c external_pid_file= -c unix_socket_directories=/pgdata -c ssl=off -c listen_addresses=127.0.0.1 -c port=${pgPort}\\n' > /usr/local/bin/entrypoint.sh
chmod 755 /usr/local/bin/entrypoint.sh`,
    };
    for (const [id, script] of Object.entries(setup)) {
      const r = await execIn(cd, id, ['bash', '-c', script]);
      assert.equal(r.code, 0, `${id}: ${r.stderr}`);
    }
    services.push(
      {
        name: 'nginx',
        container: 'nginx-c',
        comm: 'nginx',
        entrypoint: ['/usr/local/bin/entrypoint.sh'],
        ready: ['curl', '-fsS', '-o', '/dev/null', `http://127.0.0.1:${httpPort}/`],
        diagnose: ['curl', '-sSI', `http://127.0.0.1:${httpPort}/`],
        traffic: [
          ...Array.from({ length: 10 }, () => ({
            argv: ['curl', '-fsS', `http://127.0.0.1:${httpPort}/`],
            expect: /Welcome to nginx/,
          })),
          {
            argv: [
              'curl',
              '-sS',
              '-o',
              '/dev/null',
              '-w',
              '%{http_code}',
              `http://127.0.0.1:${httpPort}/missing`,
            ],
            expect: /^404$/,
          },
        ],
      },
      {
        name: 'redis',
        container: 'redis-c',
        comm: 'redis-server',
        entrypoint: ['/usr/local/bin/entrypoint.sh'],
        ready: ['redis-cli', '-p', String(redisPort), 'PING'],
        diagnose: ['redis-cli', '-p', String(redisPort), 'INFO', 'server'],
        traffic: [
          ...Array.from({ length: 10 }, (_, i) => ({
            argv: ['redis-cli', '-p', String(redisPort), 'SET', `k${i}`, `v${i}`],
            expect: /OK/,
          })),
          ...Array.from({ length: 10 }, (_, i) => ({
            argv: ['redis-cli', '-p', String(redisPort), 'GET', `k${i}`],
            expect: new RegExp(`^v${i}$`, 'm'),
          })),
        ],
      },
      {
        name: 'postgres',
        container: 'postgres-c',
        comm: 'postgres',
        user: 'postgres',
        entrypoint: ['/usr/local/bin/entrypoint.sh'],
        ready: [`${PG}/pg_isready`, '-h', '127.0.0.1', '-p', String(pgPort), '-q'],
        diagnose: [`${PG}/pg_isready`, '-h', '127.0.0.1', '-p', String(pgPort)],
        traffic: [
          {
            argv: [
              `${PG}/psql`,
              '-h',
              '127.0.0.1',
              '-p',
              String(pgPort),
              '-U',
              'postgres',
              '-c',
              'CREATE TABLE IF NOT EXISTS t (id int, v text)',
            ],
            expect: /CREATE TABLE/,
          },
          {
            argv: [
              `${PG}/psql`,
              '-h',
              '127.0.0.1',
              '-p',
              String(pgPort),
              '-U',
              'postgres',
              '-c',
              "INSERT INTO t SELECT g, 'row' || g FROM generate_series(1, 100) g",
            ],
            expect: /INSERT 0 100/,
          },
          {
            argv: [
              `${PG}/psql`,
              '-h',
              '127.0.0.1',
              '-p',
              String(pgPort),
              '-U',
              'postgres',
              '-At',
              '-c',
              'SELECT count(*), max(v) FROM t WHERE id > 50',
            ],
            expect: /^50\|row99$/m,
          },
          {
            argv: [
              `${PG}/psql`,
              '-h',
              '127.0.0.1',
              '-p',
              String(pgPort),
              '-U',
              'postgres',
              '-c',
              'DROP TABLE t',
            ],
            expect: /DROP TABLE/,
          },
        ],
      },
    );
    // Users are looked up (an exec of id) before enforcement, so that no profile sees the lookup.
    for (const svc of services) if (svc.user !== undefined) await resolveUser(cd, svc.container, svc.user);
    enforcer = await startEnforcer([
      '--policy-dir',
      policyDir,
      '--data-plane',
      'fanotify',
      '--node-name',
      'hardening-svc-node',
      '--containerd-socket',
      cd.socket,
      '--state-dir',
      stateDir,
      '--alert-log',
      join(work, 'alerts.jsonl'),
      '--poll-ms',
      '200',
    ]);
  });

  after(async function () {
    this.timeout(120000);
    await enforcer?.kill('SIGTERM');
    if (stateDir) await stopHelper(join(stateDir, 'fanotify.sock'));
    if (cd)
      for (const id of ['nginx-c', 'redis-c', 'postgres-c', 'client-c']) await removeDebianContainer(cd, id);
    await cd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  describe('baseline, block posture', () => {
    const baseline = (): BundlePolicy[] => selectProfile(catalog, 'baseline');
    before(async function () {
      if (!enforcer) this.skip();
      await setPolicies(profileFiles(baseline()));
      const pods = baseline().filter((p) => p.kind === 'RuntimePolicy').length;
      await waitForStatus(
        enforcer?.url ?? '',
        (s) => s.workloads.filter((w) => w.namespace === NS && w.policies.length === pods).length === 3,
        30000,
      );
    });
    for (const name of ['nginx', 'redis', 'postgres'] as const) {
      it(`${name} starts, serves and stops with zero Block alerts`, async function () {
        this.timeout(120000);
        const svc = services.find((s) => s.name === name);
        assert.ok(svc);
        const blocks = await lifecycle(svc, true);
        assert.deepEqual(
          blocks.map((b) => `${b.PolicyName} ${b.Operation} ${b.Resource}`),
          [],
        );
      });
    }
  });

  describe('restricted, block posture', () => {
    const restricted = (): BundlePolicy[] => selectProfile(catalog, 'restricted');
    before(async function () {
      if (!enforcer) this.skip();
      await setPolicies(profileFiles(restricted()));
      const pods = restricted().filter((p) => p.kind === 'RuntimePolicy').length;
      await waitForStatus(
        enforcer?.url ?? '',
        (s) => s.workloads.filter((w) => w.namespace === NS && w.policies.length === pods).length === 3,
        30000,
      );
    });
    for (const name of ['nginx', 'redis', 'postgres'] as const) {
      it(`${name}: what restricted blocks is what its example Allow policy grants`, async function () {
        this.timeout(120000);
        const svc = services.find((s) => s.name === name);
        assert.ok(svc);
        const blocks = await lifecycle(svc, false);
        const seen = new Set(blocks.map((b) => `${b.Operation} ${b.Resource}`));
        needed.set(name, seen);
        process.stdout.write(
          `      ${name} needed under restricted: ${[...seen].sort().join(', ') || 'nothing'}\n`,
        );
        // The example Allow policy of this service lists (at least) every exec restricted denied.
        const allow = allowFiles.find((f) => f.file === `allow/${name}.yaml`);
        assert.ok(allow, `policies/hardening/allow/${name}.yaml exists`);
        for (const s of seen) {
          const [, resource] = s.split(' ');
          assert.ok(allow.text.includes(`path: ${resource ?? ''}`), `allow/${name}.yaml grants ${s}`);
        }
      });
    }
  });

  describe('restricted plus the example Allow policies, block posture', () => {
    before(async function () {
      if (!enforcer) this.skip();
      const restricted = selectProfile(catalog, 'restricted');
      await setPolicies({ ...profileFiles(restricted), ...allowPolicyFiles() });
      const pods = restricted.filter((p) => p.kind === 'RuntimePolicy').length;
      await waitForStatus(
        enforcer?.url ?? '',
        (s) => s.workloads.filter((w) => w.namespace === NS && w.policies.length === pods + 1).length === 3,
        30000,
      );
    });
    for (const name of ['nginx', 'redis', 'postgres'] as const) {
      it(`${name} starts, serves and stops with zero Block alerts`, async function () {
        this.timeout(120000);
        const svc = services.find((s) => s.name === name);
        assert.ok(svc);
        const blocks = await lifecycle(svc, true);
        assert.deepEqual(
          blocks.map((b) => `${b.PolicyName} ${b.Operation} ${b.Resource}`),
          [],
        );
      });
    }

    it('the Allow policies are allow lists: an exec outside them is denied by the block posture', async function () {
      this.timeout(60000);
      if (!cd || !enforcer) throw new Error('not started');
      const r = await execIn(cd, 'nginx-c', ['/usr/bin/id']);
      assert.notEqual(r.code, 0);
      assert.match(r.stdout + r.stderr, /operation not permitted/i);
      const found = readLogs(enforcer.url, ['-n', NS]).find(
        (a) => a.PodName === 'nginx-0' && a.Resource === '/usr/bin/id' && a.Action === 'Block',
      );
      assert.equal(found?.PolicyName, 'DefaultPosture');
    });
  });
});
