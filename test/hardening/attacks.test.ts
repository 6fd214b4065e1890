// Every hardening policy against the attack it names, on real containers: a Debian root file system built by
// mmdebstrap (real bash, coreutils, apt, curl, python3, nmap, postgresql …, cached by content hash), imported
// into a private containerd, run by runc and labelled as the kubelet labels pod containers; `rtctl enforcer
// run` with the fanotify data plane over a policy directory holding every bundle; outcomes read back through
// `rtctl logs -n <ns> --json`. Block: the attack fails with EPERM and a Block alert names the policy. Audit:
// the attack succeeds and an Audit alert names the policy. Node policies: the attack runs as a process of this
// host (the enforcer marks the host's disk file systems while a host policy selects the node). One enforcer
// and one container serve every case.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildCatalog, policyForApply, type BundlePolicy } from '../../compiler/bundles/catalog.js';
import { readBundleSources } from '../../compiler/bundles/load.js';
import { toYaml } from '../../compiler/emit/yaml-text.js';
import type { AlertRecord } from '../../enforcer/alerts/alert-record.js';
import { REPO_ROOT } from '../support/paths.js';
import type { Containerd } from '../enforcer/support/containerd.js';
import {
  fetchAlerts,
  readLogs,
  waitForAlert,
  waitForStatus,
  type EnforcerProcess,
} from '../enforcer/support/enforcer-process.js';
import { execIn } from './support/debian-image.js';
import { startDebianEnv, type DebianEnv } from './support/debian-env.js';

const runFile = promisify(execFile);
const NS = 'hard-attack';
const CONTAINER = 'attack-c';
const PG = '/usr/lib/postgresql/15/bin';
/** PostgreSQL on the copied Debian cluster: data and unix socket in /pgdata, no pid file under /run. */
const PG_ARGS = [
  '-D',
  '/pgdata',
  '-c',
  'config_file=/etc/postgresql/15/main/postgresql.conf',
  '-c',
  'data_directory=/pgdata',
  '-c',
  'external_pid_file=',
  '-c',
  'unix_socket_directories=/pgdata',
  '-c',
  'ssl=off',
];
const FAKE_TOOLS = [
  'zmap',
  'xmrig',
  'sshd',
  'ctr',
  'kubectl',
  'aws',
  'chisel',
  'lazagne',
  'john',
  'bpftool',
  'pip3',
  'telnet',
  'vsftpd',
];

/** Prepares the container before enforcement starts: credential files, staged payloads, folders. */
const SETUP = `set -e
mkdir -p /opt/fake /root/.aws /root/.config/gcloud /root/.kube /root/.docker /root/.ssh /etc/sudoers.d \\
  /usr/local/share/ca-certificates /var/www/html /etc/systemd/system /etc/cron.d /etc/modprobe.d \\
  /etc/apt/sources.list.d /etc/profile.d
for n in ${FAKE_TOOLS.join(' ')}; do cp /usr/bin/true /opt/fake/$n; done
cp /usr/bin/true /root/.rtctl-hidden
cp /usr/bin/true /tmp/rtctl-payload
printf '[default]\\naws_access_key_id = AKIAHARDENINGTEST\\n' > /root/.aws/credentials
echo gcloud-token > /root/.config/gcloud/credentials.db
echo 'apiVersion: v1' > /root/.kube/config
echo '{"auths":{"registry.example":{"auth":"dGVzdA=="}}}' > /root/.docker/config.json
echo 'host private key' > /etc/ssh/ssh_host_ed25519_key && chmod 600 /etc/ssh/ssh_host_ed25519_key
echo 'ls -la' > /root/.bash_history
echo evidence > /tmp/rtctl-evidence
printf 'int main(void) { return 0; }\\n' > /tmp/rtctl-x.c
touch /var/log/wtmp
cp -a /var/lib/postgresql/15/main/. /pgdata/ && chown -R postgres:postgres /pgdata && chmod 700 /pgdata
`;

/** One attack: the command a technique uses, and the outcome its policy must produce. */
interface Attack {
  policy: string;
  argv: string[];
  /** Block: denied and a Block alert; Audit: runs and an Audit alert. */
  expect: 'Block' | 'Audit';
  /** A part of the alert's Resource (the binary executed or the file opened). */
  resource: string;
  user?: string;
  /** For Block: the caller prints the errno text (false when the denial surfaces another way). */
  errnoText?: boolean;
}

const append = (file: string): string[] => [
  'dd',
  'if=/dev/null',
  `of=${file}`,
  'oflag=append',
  'conv=notrunc',
  'status=none',
];
const fake = (name: string, ...args: string[]): string[] => [`/opt/fake/${name}`, ...args];
const block = (policy: string, argv: string[], resource: string, extra: Partial<Attack> = {}): Attack => ({
  policy,
  argv,
  expect: 'Block',
  resource,
  ...extra,
});
const audit = (policy: string, argv: string[], resource: string): Attack => ({
  policy,
  argv,
  expect: 'Audit',
  resource,
});

const POD_ATTACKS: readonly Attack[] = [
  block(
    'cis-protect-system-binaries',
    ['cp', '/usr/bin/true', '/usr/bin/rtctl-implant'],
    '/usr/bin/rtctl-implant',
  ),
  block('cis-protect-account-files', append('/etc/passwd'), '/etc/passwd'),
  block('cis-protect-cron', append('/etc/cron.d/rtctl-job'), '/etc/cron.d/rtctl-job'),
  block('cis-protect-sshd-config', append('/etc/ssh/sshd_config'), '/etc/ssh/sshd_config'),
  block('stig-protect-sudoers', append('/etc/sudoers.d/rtctl'), '/etc/sudoers.d/rtctl'),
  block('mitre-protect-pam', append('/etc/pam.d/common-auth'), '/etc/pam.d/common-auth'),
  block(
    'mitre-protect-kernel-module-config',
    append('/etc/modprobe.d/rtctl.conf'),
    '/etc/modprobe.d/rtctl.conf',
  ),
  block(
    'nist-protect-package-sources',
    append('/etc/apt/sources.list.d/rtctl.list'),
    '/etc/apt/sources.list.d/rtctl.list',
  ),
  block('cis-block-ssh-server', fake('sshd', '-D'), '/opt/fake/sshd'),
  block(
    'cis-protect-runtime-sockets',
    ['cat', '/run/containerd/io.containerd.runtime.v2.task/k8s.io/victim/config.json'],
    '/run/containerd/io.containerd.runtime.v2.task/k8s.io/victim/config.json',
  ),
  block('mitre-block-discovery-tools', ['nmap', '-sn', '127.0.0.1'], '/usr/bin/nmap'),
  audit('mitre-audit-credential-access', ['cat', '/root/.aws/credentials'], '/root/.aws/credentials'),
  block(
    'mitre-block-cloud-credentials',
    ['cat', '/root/.config/gcloud/credentials.db'],
    '/root/.config/gcloud/credentials.db',
  ),
  block('mitre-block-kubeconfig-read', ['cat', '/root/.kube/config'], '/root/.kube/config'),
  audit(
    'mitre-audit-service-account-token',
    ['cat', '/run/secrets/kubernetes.io/serviceaccount/token'],
    '/run/secrets/kubernetes.io/serviceaccount/token',
  ),
  block('mitre-block-download-tools', ['curl', '-fsS', 'http://127.0.0.1:9/stage2.sh'], '/usr/bin/curl'),
  block(
    'mitre-block-remote-copy-tools',
    ['scp', '-o', 'BatchMode=yes', '/etc/hostname', 'root@127.0.0.1:/tmp/x'],
    '/usr/bin/scp',
  ),
  block('mitre-block-netcat', ['nc', '-z', '127.0.0.1', '9'], 'nc.openbsd'),
  block('mitre-block-network-scanners', fake('zmap', '-p', '80', '10.0.0.0/8'), '/opt/fake/zmap'),
  block('mitre-block-crypto-miners', fake('xmrig', '-o', 'pool.example:3333'), '/opt/fake/xmrig'),
  block('mitre-block-ptrace-tools', ['strace', '-f', 'true'], '/usr/bin/strace'),
  block('mitre-block-namespace-tools', ['nsenter', '-t', '1', '-m', 'true'], '/usr/bin/nsenter'),
  block('mitre-block-mount-tools', ['mount', '-t', 'tmpfs', 'none', '/mnt'], '/usr/bin/mount'),
  block('mitre-block-kernel-module-tools', ['modprobe', 'dummy'], '/usr/bin/kmod'),
  block(
    'mitre-block-shell-from-server',
    [
      `${PG}/psql`,
      '-h',
      '/pgdata',
      '-U',
      'postgres',
      '-c',
      "CREATE TEMP TABLE t (x text); COPY t FROM PROGRAM 'id'",
    ],
    '/usr/bin/dash',
    { user: 'postgres', errnoText: false },
  ),
  block(
    'mitre-protect-ssh-authorized-keys',
    append('/root/.ssh/authorized_keys'),
    '/root/.ssh/authorized_keys',
  ),
  block(
    'mitre-block-ssh-host-key-read',
    ['cat', '/etc/ssh/ssh_host_ed25519_key'],
    '/etc/ssh/ssh_host_ed25519_key',
  ),
  block('mitre-block-credential-stores', ['cat', '/root/.docker/config.json'], '/root/.docker/config.json'),
  audit(
    'mitre-audit-history-tampering',
    ['dd', 'if=/dev/null', 'of=/root/.bash_history', 'status=none'],
    '/root/.bash_history',
  ),
  block('mitre-block-container-runtime-clients', fake('ctr', 'run', '--privileged', 'x'), '/opt/fake/ctr'),
  block('mitre-block-cluster-clients', fake('kubectl', 'get', 'secrets'), '/opt/fake/kubectl'),
  block('mitre-block-cloud-clis', fake('aws', 'sts', 'get-caller-identity'), '/opt/fake/aws'),
  block('mitre-block-tunneling-tools', fake('chisel', 'client'), '/opt/fake/chisel'),
  block('mitre-block-credential-dumpers', fake('lazagne', 'all'), '/opt/fake/lazagne'),
  block('mitre-block-password-crackers', fake('john', '/etc/shadow'), '/opt/fake/john'),
  block('mitre-block-file-wipers', ['shred', '-u', '/tmp/rtctl-evidence'], '/usr/bin/shred'),
  block('mitre-block-hidden-executables', ['/root/.rtctl-hidden'], '/root/.rtctl-hidden'),
  block('mitre-block-web-shell-writes', append('/var/www/html/shell.php'), '/var/www/html/shell.php'),
  block('mitre-block-linker-hijack', append('/etc/ld.so.preload'), '/etc/ld.so.preload'),
  block('mitre-protect-shell-profiles', append('/etc/profile.d/rtctl.sh'), '/etc/profile.d/rtctl.sh'),
  block(
    'mitre-protect-service-units',
    append('/etc/systemd/system/rtctl.service'),
    '/etc/systemd/system/rtctl.service',
  ),
  block('mitre-block-bpf-tools', fake('bpftool', 'prog', 'load'), '/opt/fake/bpftool'),
  block('mitre-block-user-management', ['useradd', 'rtctl-evil'], '/usr/sbin/useradd'),
  block('nist-block-package-managers', ['apt-get', 'install', '-y', 'nmap'], '/usr/bin/apt-get'),
  block('nist-block-language-package-managers', fake('pip3', 'install', 'x'), '/opt/fake/pip3'),
  block('nist-block-raw-sockets', ['tcpdump', '-i', 'lo', '-c', '1'], 'tcpdump'),
  block('nist-block-compilers', ['tcc', '-run', '/tmp/rtctl-x.c'], '/usr/bin/tcc'),
  block(
    'nist-protect-trust-store',
    append('/usr/local/share/ca-certificates/rtctl.crt'),
    '/usr/local/share/ca-certificates/rtctl.crt',
  ),
  block('nist-protect-name-resolution', append('/etc/hosts'), '/etc/hosts'),
  block('nist-block-kernel-tuning', ['sysctl', '-w', 'kernel.core_pattern=|/tmp/x'], '/usr/sbin/sysctl'),
  block('nist-block-exec-from-temp', ['/tmp/rtctl-payload'], '/tmp/rtctl-payload'),
  block('nist-block-shells', ['bash', '-c', 'true'], '/usr/bin/bash'),
  block('nist-block-interpreters', ['python3', '-c', 'print(1)'], '/usr/bin/python3'),
  block('nist-protect-log-files', append('/var/log/wtmp'), '/var/log/wtmp'),
  block('stig-block-remote-shells', fake('telnet', '127.0.0.1'), '/opt/fake/telnet'),
  block('stig-block-file-transfer-servers', fake('vsftpd'), '/opt/fake/vsftpd'),
  block('stig-block-privilege-escalation-tools', ['su', '-s', '/usr/bin/true', 'nobody'], '/usr/bin/su'),
  block('nist-protect-login-defaults', append('/etc/login.defs'), '/etc/login.defs'),
];

/** Node attacks: argv run on this host; paths created for a case are removed after. */
interface HostAttack extends Attack {
  /** Folders the case needs (created when absent, removed after if created). */
  dirs: string[];
  /** Files written before enforcement (removed after). */
  files?: Record<string, string>;
}

/** Folder of the node attacks' staged binaries, on the host's disk (the host workload's marks cover it). */
const HOST_WORK = join('/var/tmp', `rtctl-hardening-host-${process.pid}`);

const HOST_ATTACKS: readonly HostAttack[] = [
  {
    ...block(
      'cis-host-restrict-kubelet-pki',
      append('/etc/kubernetes/pki/rtctl-probe.key'),
      '/etc/kubernetes/pki/rtctl-probe.key',
    ),
    dirs: ['/etc/kubernetes/pki'],
  },
  {
    ...block(
      'cis-host-protect-static-pod-manifests',
      append('/etc/kubernetes/manifests/rtctl-probe.yaml'),
      '/etc/kubernetes/manifests/rtctl-probe.yaml',
    ),
    dirs: ['/etc/kubernetes/manifests'],
  },
  {
    ...block(
      'cis-host-protect-kubelet-config',
      append('/var/lib/kubelet/config.yaml'),
      '/var/lib/kubelet/config.yaml',
    ),
    dirs: ['/var/lib/kubelet'],
  },
  {
    ...audit(
      'mitre-host-audit-admin-kubeconfig',
      ['cat', '/etc/kubernetes/admin.conf'],
      '/etc/kubernetes/admin.conf',
    ),
    dirs: ['/etc/kubernetes'],
    files: { '/etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n' },
  },
  {
    ...audit(
      'mitre-host-audit-kernel-module-tools',
      [join(HOST_WORK, 'insmod'), 'rootkit.ko'],
      join(HOST_WORK, 'insmod'),
    ),
    dirs: [],
  },
  {
    ...block(
      'nist-host-protect-runtime-config',
      append('/etc/containerd/rtctl-hardening-probe.toml'),
      '/etc/containerd/rtctl-hardening-probe.toml',
    ),
    dirs: ['/etc/containerd'],
  },
  { ...audit('stig-host-audit-privileged-tools', ['/usr/bin/su', '--version'], '/usr/bin/su'), dirs: [] },
  {
    ...block(
      'stig-host-protect-audit-config',
      append('/etc/audit/rules.d/rtctl.rules'),
      '/etc/audit/rules.d/rtctl.rules',
    ),
    dirs: ['/etc/audit/rules.d'],
  },
  {
    ...audit(
      'stig-host-audit-audit-tools',
      [join(HOST_WORK, 'auditctl'), '-e', '0'],
      join(HOST_WORK, 'auditctl'),
    ),
    dirs: [],
  },
];

describe('hardening attacks on real containers (Debian rootfs, containerd, runc, fanotify)', function () {
  this.timeout(120000);
  let env: DebianEnv | undefined;
  let cd: Containerd | undefined;
  let enforcer: EnforcerProcess | undefined;
  let work = '';
  let policyDir = '';
  const catalog = buildCatalog(readBundleSources(join(REPO_ROOT, 'policies', 'hardening')));
  // allow/ holds the services' example Allow policies (services.test.ts). imds/ guards the instance metadata
  // address with a network rule the fanotify plane does not enforce, and its attack (a connection to
  // 169.254.169.254) must never run on this host: its own tests cover it.
  const tested = (p: BundlePolicy): boolean => p.bundle !== 'allow' && p.bundle !== 'imds';
  const podPolicies = catalog.policies.filter((p) => p.kind === 'RuntimePolicy' && tested(p));
  const hostPolicies = catalog.policies.filter((p) => p.kind === 'RuntimeHostPolicy' && tested(p));

  function writePolicies(policies: readonly BundlePolicy[], namespace?: string): void {
    for (const p of policies)
      writeFileSync(join(policyDir, `${p.name}.yaml`), toYaml(policyForApply(p, namespace)));
  }

  before(async function () {
    // The root file system build downloads packages on a cold cache (minutes); later runs reuse it.
    this.timeout(30 * 60 * 1000);
    env = await startDebianEnv(this, 'rtctl-hardening-');
    cd = env.cd;
    work = env.work;
    policyDir = env.policyDir;
    const sa = join(work, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'eyJhbGciOiJSUzI1NiJ9.hardening-test-token\n');
    const runtimeState = join(work, 'containerd-state', 'io.containerd.runtime.v2.task', 'k8s.io', 'victim');
    mkdirSync(runtimeState, { recursive: true });
    writeFileSync(join(runtimeState, 'config.json'), '{"ociVersion":"1.0.2"}\n');
    const pgdata = join(work, 'pgdata');
    mkdirSync(pgdata);
    await env.run({
      id: CONTAINER,
      pod: 'attack-0',
      namespace: NS,
      container: 'attack',
      labels: { app: 'attack' },
      mounts: [
        { source: sa, destination: '/run/secrets/kubernetes.io/serviceaccount' },
        { source: join(work, 'containerd-state'), destination: '/run/containerd' },
        // PostgreSQL's data in a plain directory of the test's, bind-mounted.
        { source: pgdata, destination: '/pgdata', readOnly: false },
      ],
    });
    const setup = await execIn(cd, CONTAINER, ['bash', '-c', SETUP]);
    assert.equal(setup.code, 0, setup.stderr);
    // PostgreSQL for the server-spawns-a-shell attack: the cluster Debian's package created, unix socket only.
    const pg = await execIn(cd, CONTAINER, [`${PG}/postgres`, ...PG_ARGS, '-c', 'listen_addresses='], {
      user: 'postgres',
      detach: true,
    });
    assert.equal(pg.code, 0, pg.stderr);
    let ready = false;
    for (let i = 0; i < 300 && !ready; i++) {
      ready = (await execIn(cd, CONTAINER, [`${PG}/pg_isready`, '-h', '/pgdata', '-q'])).code === 0;
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(ready, 'postgresql accepts connections');
    writePolicies(podPolicies, NS);
    // The cgroup network plane too (a bpffs this run mounts): the miner policy's pool-port rules.
    const pinDir = env.mountBpffs();
    enforcer = await env.startEnforcer(
      [
        '--node-name',
        'hardening-node',
        '--cluster-name',
        'hardening',
        '--node-label',
        'kubernetes.io/os=linux',
      ],
      { RTCTL_NETWORK_PIN_DIR: pinDir },
    );
    await waitForStatus(
      enforcer.url,
      (s) => s.workloads.some((w) => w.namespace === NS && w.policies.length === podPolicies.length),
      60000,
    );
  });

  after(async function () {
    this.timeout(120000);
    await env?.stop();
  });

  it('has one attack for every pod policy of the bundles', () => {
    assert.deepEqual(POD_ATTACKS.map((a) => a.policy).sort(), podPolicies.map((p) => p.name).sort());
  });

  /** Runs an attack's checks once its command ran. */
  async function checkOutcome(
    a: Attack,
    r: { code: number; stdout: string; stderr: string },
    namespace: string | undefined,
  ): Promise<AlertRecord> {
    const url = enforcer?.url ?? '';
    const matches = (x: AlertRecord): boolean =>
      x.PolicyName === a.policy && x.Action === a.expect && x.Resource.includes(a.resource);
    await waitForAlert(url, matches, 15000).catch(async (err: unknown) => {
      const seen = (await fetchAlerts(url))
        .filter((x) => x.PolicyName === a.policy || x.Resource.includes(a.resource))
        .map((x) => `${x.PolicyName} ${x.Action} ${x.Operation} ${x.Resource} ${x.Result}`);
      throw new Error(
        `${String(err)}: exit ${r.code}, output ${JSON.stringify(r.stdout + r.stderr)}; related alerts: ${JSON.stringify(seen)}`,
      );
    });
    // The outcome as a user reads it: rtctl logs (-n <namespace>) --json.
    const logs = readLogs(url, namespace === undefined ? [] : ['-n', namespace]);
    const alert = logs.find(matches);
    assert.ok(alert, `rtctl logs shows a ${a.expect} alert of ${a.policy} on ${a.resource}`);
    if (a.expect === 'Block') {
      assert.notEqual(r.code, 0, `the attack must fail: ${r.stdout}${r.stderr}`);
      if (a.errnoText !== false)
        assert.match(r.stderr + r.stdout, /operation not permitted|permission denied/i);
      assert.equal(alert.Result, 'Operation not permitted');
    } else {
      assert.equal(r.code, 0, `the audited attack must pass: ${r.stderr}`);
      assert.equal(alert.Result, 'Passed');
    }
    return alert;
  }

  for (const a of POD_ATTACKS) {
    it(`${a.policy}: ${a.argv.join(' ')} → ${a.expect === 'Block' ? 'denied' : 'passes'} and alerted`, async function () {
      this.timeout(60000);
      if (!cd) throw new Error('containerd not started');
      const r = await execIn(cd, CONTAINER, a.argv, a.user === undefined ? {} : { user: a.user });
      const alert = await checkOutcome(a, r, NS);
      assert.equal(alert.NamespaceName, NS);
      assert.equal(alert.PodName, 'attack-0');
    });
  }

  describe('mining pool ports (cgroup network plane, in the container network namespace)', () => {
    // psql is a real TCP client no bundle blocks; nothing listens on these ports in the container's namespace,
    // so a connect the hook lets through is refused by the kernel (ECONNREFUSED), and one it denies fails with
    // EPERM before it leaves the socket.
    const connect = (
      host: string,
      port: number,
    ): Promise<{ code: number; stdout: string; stderr: string }> => {
      if (!cd) throw new Error('containerd not started');
      return execIn(cd, CONTAINER, [
        `${PG}/psql`,
        `postgresql://postgres@${host.includes(':') ? `[${host}]` : host}:${port}/postgres?connect_timeout=5`,
        '-c',
        'select 1',
      ]);
    };
    const poolAlert = (resource: string) => (x: AlertRecord) =>
      x.PolicyName === 'mitre-block-crypto-miners' &&
      x.Operation === 'Network' &&
      x.Action === 'Block' &&
      x.Resource === resource;

    for (const [host, port, resource] of [
      ['127.0.0.1', 3333, '127.0.0.1:3333'],
      ['::1', 14444, '[::1]:14444'],
    ] as const) {
      it(`mitre-block-crypto-miners: a connect to ${resource} (a Stratum port) → EPERM and a Block alert`, async function () {
        this.timeout(60000);
        const r = await connect(host, port);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /Operation not permitted/, JSON.stringify(r));
        const url = enforcer?.url ?? '';
        await waitForAlert(url, poolAlert(resource), 15000);
        const a = readLogs(url, ['-n', NS, '--operation', 'Network']).find(poolAlert(resource));
        assert.ok(a, `rtctl logs -n ${NS} shows the Block alert on ${resource}`);
        assert.equal(a.PodName, 'attack-0');
        assert.equal(
          a.Data,
          `syscall=SYS_CONNECT family=AF_INET${host.includes(':') ? '6' : ''} protocol=tcp address=${host} port=${port}`,
        );
        assert.match(a.ProcessName, /psql$/);
      });
    }

    it('a connect to a port off the list gets past the hook: refused by the kernel, no alert', async function () {
      this.timeout(60000);
      const r = await connect('127.0.0.1', 3332);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Connection refused/, JSON.stringify(r));
      assert.doesNotMatch(r.stderr, /Operation not permitted/);
      // Barrier: a denied connect after it; the plane reports in order, so once that alert is in, an alert
      // on port 3332 would be too.
      const before = (await fetchAlerts(enforcer?.url ?? '')).filter(poolAlert('127.0.0.1:3333')).length;
      await connect('127.0.0.1', 3333);
      const end = Date.now() + 15000;
      while ((await fetchAlerts(enforcer?.url ?? '')).filter(poolAlert('127.0.0.1:3333')).length <= before) {
        assert.ok(Date.now() < end, 'the barrier alert arrives');
        await new Promise((res) => setTimeout(res, 100));
      }
      const logs = readLogs(enforcer?.url ?? '', ['-n', NS, '--operation', 'Network']);
      assert.deepEqual(
        logs.filter((x) => x.Resource.endsWith(':3332')).map((x) => `${x.PolicyName} ${x.Resource}`),
        [],
      );
    });
  });

  describe('node policies (host processes)', function () {
    const created: string[] = [];
    const written: string[] = [];

    before(async function () {
      this.timeout(60000);
      if (!enforcer) this.skip();
      mkdirSync(HOST_WORK, { recursive: true });
      for (const n of ['auditctl', 'insmod']) {
        copyFileSync('/usr/bin/true', join(HOST_WORK, n));
        chmodSync(join(HOST_WORK, n), 0o755);
      }
      assert.deepEqual(HOST_ATTACKS.map((a) => a.policy).sort(), hostPolicies.map((p) => p.name).sort());
      for (const a of HOST_ATTACKS) {
        for (const d of a.dirs) {
          // Only folders this test creates are removed after it.
          const parts = d.split('/').filter(Boolean);
          for (let i = 1; i <= parts.length; i++) {
            const p = `/${parts.slice(0, i).join('/')}`;
            if (!existsSync(p)) {
              mkdirSync(p);
              created.push(p);
            }
          }
        }
        for (const [f, text] of Object.entries(a.files ?? {})) {
          writeFileSync(f, text);
          written.push(f);
        }
        // The probe files the attacks try to create (fanotify denies the open after the file is created).
        if (a.expect === 'Block') written.push(a.resource);
      }
      const before = (await waitForStatus(enforcer?.url ?? '', () => true)).generation;
      writePolicies(hostPolicies);
      await waitForStatus(
        enforcer?.url ?? '',
        (s) =>
          s.generation > before &&
          s.workloads.some((w) => w.namespace === '' && w.policies.length === hostPolicies.length),
        30000,
      );
    });

    after(async function () {
      this.timeout(60000);
      for (const p of hostPolicies) rmSync(join(policyDir, `${p.name}.yaml`), { force: true });
      if (enforcer) {
        const url = enforcer.url;
        await waitForStatus(
          url,
          (s) => !s.workloads.some((w) => w.namespace === '' && w.policies.length > 0),
          30000,
        ).catch(() => undefined);
      }
      for (const f of written) rmSync(f, { force: true });
      for (const d of created.reverse()) rmSync(d, { recursive: true, force: true });
      rmSync(HOST_WORK, { recursive: true, force: true });
    });

    for (const a of HOST_ATTACKS) {
      it(`${a.policy}: ${a.argv.join(' ')} on the node → ${a.expect === 'Block' ? 'denied' : 'passes'} and alerted`, async function () {
        this.timeout(60000);
        const [cmd, ...args] = a.argv;
        let r: { code: number; stdout: string; stderr: string };
        try {
          const out = await runFile(cmd ?? '', args, { timeout: 20000 });
          r = { code: 0, stdout: out.stdout, stderr: out.stderr };
        } catch (err) {
          const e = err as { code?: number; stdout?: string; stderr?: string };
          r = {
            code: typeof e.code === 'number' ? e.code : 1,
            stdout: e.stdout ?? '',
            stderr: e.stderr ?? '',
          };
        }
        const alert = await checkOutcome(a, r, undefined);
        assert.equal(alert.NamespaceName, '');
      });
    }
  });
});
