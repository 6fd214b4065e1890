// The enforcement scenarios of the busybox end-to-end suite (test/enforcer/e2e/fanotify-enforcement.test.ts)
// and of the reference project's own end-to-end cases (process path and directory Block and Audit, recursive
// directories, fromSource, ownerOnly, readOnly, allow lists under a namespace posture, host policies), run
// again with real binaries at their real paths: the Debian containers of the hardening suites (bash, dash,
// coreutils, python3 from Debian packages, /bin merged into /usr/bin), the same private containerd and
// `rtctl enforcer run` with the fanotify data plane. Every step asserts the command's real exit status and
// output, and its alert (or the absence of one) as `rtctl logs -n <namespace> --json` prints it.
//
// "No alert" is checked against a barrier: after the step, the same container reads a sentinel file an Audit
// policy watches; once that alert is in, every alert of the step is too (one helper, one ordered stream).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AlertRecord } from '../../enforcer/alerts/alert-record.js';
import {
  fetchAlerts,
  readLogs,
  waitForAlert,
  type EnforcerProcess,
} from '../enforcer/support/enforcer-process.js';
import { debianImageName, execIn, resolveUser } from './support/debian-image.js';
import { startDebianEnv, type DebianEnv } from './support/debian-env.js';

const NODE = 'peer-node';
const CLUSTER = 'peer-cluster';
const NS_A = 'peer-a';
const NS_B = 'peer-b';
const SA_DIR = '/run/secrets/kubernetes.io/serviceaccount';
/** A script at the same path on the host and in the containers (the host-policy scenario). */
const HOST_TOOL = '/usr/local/bin/rtctl-peer-tool';
const TOOL_SCRIPT = '#!/bin/sh\necho tool-ran\n';
/** The host scenarios' files, on the host's disk (the host workload's marks cover it). */
const HOST_WORK = join('/var/tmp', `rtctl-peer-${process.pid}`);
const SENTINEL = '/etc/peer-sentinel';
/** The ELF interpreter of Debian's amd64 binaries (at its merged-/usr path). */
const LOADER = '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2';
const HOST_SENTINEL = join(HOST_WORK, 'sentinel');

type Where = 'web' | 'db' | 'api' | 'host';
const CONTAINERS = {
  web: {
    id: 'peer-web-c',
    pod: 'web-1',
    namespace: NS_A,
    container: 'web',
    labels: { app: 'web', group: 'group-1' },
  },
  db: {
    id: 'peer-db-c',
    pod: 'db-1',
    namespace: NS_A,
    container: 'db',
    labels: { app: 'db', group: 'group-1' },
  },
  api: {
    id: 'peer-api-c',
    pod: 'api-1',
    namespace: NS_B,
    container: 'api',
    labels: { app: 'api', group: 'group-2' },
  },
} as const;

/** Prepares each container before enforcement starts: a second user, its files, staged binaries. */
const SETUP = `set -e
useradd -m -s /usr/bin/bash user1
mkdir -p /data /credentials/keys /opt/tools/sub /home/user1/dir1
echo 'hello from the image' > /data/hello.txt
echo 'password file' > /credentials/password
echo 'key file' > /credentials/keys/priv.key
echo 'secret file' > /secret.txt
echo 'secret file user1' > /home/user1/secret_data1.txt
echo 'key file 1' > /home/user1/dir1/key1.txt
cp /usr/bin/echo /home/user1/hello
chown -R user1:user1 /home/user1
cp /usr/bin/true /opt/tools/a
cp /usr/bin/true /opt/tools/sub/b
echo sentinel > ${SENTINEL}
printf '${TOOL_SCRIPT.replace(/\n/g, '\\n')}' > ${HOST_TOOL}
chmod 755 ${HOST_TOOL}
`;

interface PolicyFile {
  name: string;
  text: string;
}

/** A RuntimePolicy: `section` is the YAML of its rule sections, indented under spec. */
function pod(
  name: string,
  namespace: string,
  matchLabels: Record<string, string>,
  action: 'Block' | 'Audit' | 'Allow',
  section: string,
  severity = 5,
): PolicyFile {
  const labels = Object.entries(matchLabels).map(([k, v]) => `      ${k}: ${v}`);
  return {
    name: `${name}.yaml`,
    text: [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimePolicy',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'spec:',
      `  severity: ${severity}`,
      '  selector:',
      '    matchLabels:',
      ...labels,
      section.replace(/\n+$/, ''),
      `  action: ${action}`,
      '',
    ].join('\n'),
  };
}

function host(name: string, action: 'Block' | 'Audit', section: string): PolicyFile {
  return {
    name: `${name}.yaml`,
    text: [
      'apiVersion: security.runtime.com/v1',
      'kind: RuntimeHostPolicy',
      'metadata:',
      `  name: ${name}`,
      'spec:',
      '  severity: 5',
      '  nodeSelector:',
      '    matchLabels:',
      `      kubernetes.io/hostname: ${NODE}`,
      section.replace(/\n+$/, ''),
      `  action: ${action}`,
      '',
    ].join('\n'),
  };
}

function namespaceDoc(name: string, filePosture: 'audit' | 'block'): PolicyFile {
  return {
    name: `ns-${name}.yaml`,
    text: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  annotations:\n    runtime-file-posture: ${filePosture}\n`,
  };
}

const procPaths = (...paths: string[]): string =>
  `  process:\n    matchPaths:\n${paths.map((p) => `    - path: ${p}`).join('\n')}`;
const filePaths = (...paths: string[]): string =>
  `  file:\n    matchPaths:\n${paths.map((p) => `    - path: ${p}`).join('\n')}`;

/** The barrier policies: an Audit on the sentinel file in every container and on the host. */
const SENTINELS: PolicyFile[] = [
  pod('peer-sentinel', NS_A, { suite: 'peer' }, 'Audit', filePaths(SENTINEL), 1),
  pod('peer-sentinel', NS_B, { suite: 'peer' }, 'Audit', filePaths(SENTINEL), 1),
].map((p, i) => ({ ...p, name: `sentinel-${i}.yaml` }));
const HOST_SENTINEL_POLICY = host('peer-host-sentinel', 'Audit', filePaths(HOST_SENTINEL));

interface ExpectedAlert {
  policy: string;
  action: 'Block' | 'Audit';
  operation: 'Process' | 'File';
  resource: string;
}

interface Step {
  title: string;
  where: Where;
  argv: string[];
  user?: string;
  /** Exit status: a number, or 'nonzero'. */
  exit: number | 'nonzero';
  stdout?: RegExp;
  stderr?: RegExp;
  /** The alert the step yields, or null: none at all for that workload. */
  alert: ExpectedAlert | null;
  /** Further checks on the alert as rtctl logs printed it. */
  check?: (a: AlertRecord) => void;
}

interface Scenario {
  title: string;
  /** The peer this scenario stands for. */
  peer: string;
  policies: PolicyFile[];
  steps: Step[];
}

const bash = (script: string): string[] => ['bash', '-c', script];
const EPERM = /Operation not permitted/;
const blockAlert = (policy: string, operation: 'Process' | 'File', resource: string): ExpectedAlert => ({
  policy,
  action: 'Block',
  operation,
  resource,
});
const auditAlert = (policy: string, operation: 'Process' | 'File', resource: string): ExpectedAlert => ({
  policy,
  action: 'Audit',
  operation,
  resource,
});

const BLOCK_SLEEP = pod('block-sleep', NS_A, { app: 'web' }, 'Block', procPaths('/usr/bin/sleep'), 7);
const ALLOW_BASICS = pod(
  'allow-basics',
  NS_B,
  { app: 'api' },
  'Allow',
  // The loader: this plane sees the ELF interpreter opened by an exec as an exec of its own (docs/enforcer.md,
  // Limits), so a Process allow list names it for dynamically linked programs.
  procPaths('/usr/bin/bash', '/usr/bin/ls', '/usr/bin/cat', LOADER),
);

const SCENARIOS: Scenario[] = [
  {
    title: 'Block a process path (one pod selected by its labels)',
    peer: 'e2e 1; ksp process path block',
    policies: [BLOCK_SLEEP],
    steps: [
      {
        title: 'bash runs sleep in the selected pod: exit 126, EPERM, a Block alert with the pod identity',
        where: 'web',
        argv: bash('sleep 0'),
        exit: 126,
        stderr: /\/usr\/bin\/sleep: Operation not permitted/,
        alert: blockAlert('block-sleep', 'Process', '/usr/bin/sleep'),
        check: (a) => {
          assert.equal(a.Severity, '7');
          assert.equal(a.Type, 'MatchedPolicy');
          assert.equal(a.ContainerID, 'peer-web-c');
          assert.ok(a.ContainerImage.startsWith(`${debianImageName()}@sha256:`), a.ContainerImage);
          assert.equal(a.Labels, 'app=web,group=group-1,suite=peer');
          assert.equal(a.ClusterName, CLUSTER);
          assert.equal(a.HostName, NODE);
          assert.equal(a.ProcessName, '/usr/bin/sleep');
          assert.equal(a.ParentProcessName, '/usr/bin/bash');
          assert.equal(a.Data, 'syscall=SYS_EXECVE');
          assert.ok(a.HostPID > 1 && a.PID >= 1 && a.HostPID !== a.PID, JSON.stringify(a));
        },
      },
      {
        title: 'the unselected pod of the same namespace runs it, no alert',
        where: 'db',
        argv: bash('sleep 0; echo rc=$?'),
        exit: 0,
        stdout: /^rc=0$/m,
        alert: null,
      },
      {
        title: 'python3 subprocess in the selected pod: PermissionError, Block alert',
        where: 'web',
        argv: ['python3', '-c', "import subprocess; subprocess.run(['sleep', '0'])"],
        exit: 1,
        stderr: /PermissionError: \[Errno 1\] Operation not permitted/,
        alert: blockAlert('block-sleep', 'Process', '/usr/bin/sleep'),
      },
      {
        title: 'exec of the binary itself (runc starts it): the exec fails, Block alert',
        where: 'web',
        argv: ['/usr/bin/sleep', '0'],
        exit: 'nonzero',
        stderr: /operation not permitted/i,
        alert: blockAlert('block-sleep', 'Process', '/usr/bin/sleep'),
      },
    ],
  },
  {
    title: 'Block a process path for every pod of a group',
    peer: 'ksp group process path block',
    policies: [pod('block-group-sleep', NS_A, { group: 'group-1' }, 'Block', procPaths('/usr/bin/sleep'))],
    steps: [
      {
        title: 'first pod of the group: denied',
        where: 'web',
        argv: bash('sleep 1'),
        exit: 126,
        stderr: EPERM,
        alert: blockAlert('block-group-sleep', 'Process', '/usr/bin/sleep'),
      },
      {
        title: 'second pod of the group: denied',
        where: 'db',
        argv: bash('sleep 1'),
        exit: 126,
        stderr: EPERM,
        alert: blockAlert('block-group-sleep', 'Process', '/usr/bin/sleep'),
      },
      {
        title: 'a pod of another namespace: runs, no alert',
        where: 'api',
        argv: bash('sleep 0 && echo slept'),
        exit: 0,
        stdout: /^slept$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Audit a process path for a group',
    peer: 'ksp group process path audit',
    policies: [pod('audit-group-sleep', NS_A, { group: 'group-1' }, 'Audit', procPaths('/usr/bin/sleep'), 4)],
    steps: [
      {
        title: 'sleep runs and yields an Audit alert (Passed)',
        where: 'db',
        argv: bash('sleep 0; echo rc=$?'),
        exit: 0,
        stdout: /^rc=0$/m,
        alert: auditAlert('audit-group-sleep', 'Process', '/usr/bin/sleep'),
        check: (a) => assert.equal(a.Severity, '4'),
      },
    ],
  },
  {
    title: 'Block the binaries directly in a directory',
    peer: 'ksp process directory block',
    policies: [
      pod(
        'block-tools-dir',
        NS_A,
        { app: 'web' },
        'Block',
        '  process:\n    matchDirectories:\n    - dir: /opt/tools/',
      ),
    ],
    steps: [
      {
        title: 'a binary in the directory: denied',
        where: 'web',
        argv: bash('/opt/tools/a'),
        exit: 126,
        stderr: /\/opt\/tools\/a: Operation not permitted/,
        alert: blockAlert('block-tools-dir', 'Process', '/opt/tools/a'),
      },
      {
        title: 'a binary in a subdirectory (not recursive): runs, no alert',
        where: 'web',
        argv: bash('/opt/tools/sub/b && echo ok'),
        exit: 0,
        stdout: /^ok$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Block the binaries of a directory recursively',
    peer: 'ksp process directory recursive block',
    policies: [
      pod(
        'block-tools-tree',
        NS_A,
        { app: 'web' },
        'Block',
        '  process:\n    matchDirectories:\n    - dir: /opt/tools/\n      recursive: true',
      ),
    ],
    steps: [
      {
        title: 'a binary in the directory: denied',
        where: 'web',
        argv: bash('/opt/tools/a'),
        exit: 126,
        stderr: EPERM,
        alert: blockAlert('block-tools-tree', 'Process', '/opt/tools/a'),
      },
      {
        title: 'a binary in a subdirectory: denied',
        where: 'web',
        argv: bash('/opt/tools/sub/b'),
        exit: 126,
        stderr: /\/opt\/tools\/sub\/b: Operation not permitted/,
        alert: blockAlert('block-tools-tree', 'Process', '/opt/tools/sub/b'),
      },
    ],
  },
  {
    title: 'Block a process path from one source',
    peer: 'ksp process path block fromSource',
    policies: [
      pod(
        'block-ls-from-dash',
        NS_A,
        { app: 'web' },
        'Block',
        '  process:\n    matchPaths:\n    - path: /usr/bin/ls\n      fromSource:\n      - path: /usr/bin/dash',
      ),
    ],
    steps: [
      {
        title: 'dash runs ls: denied',
        where: 'web',
        argv: bash('/bin/dash -c "ls /"'),
        exit: 126,
        stderr: /ls: (Operation not permitted|Permission denied)/,
        alert: blockAlert('block-ls-from-dash', 'Process', '/usr/bin/ls'),
        check: (a) => assert.equal(a.ParentProcessName, '/usr/bin/dash'),
      },
      {
        title: 'bash runs ls: runs, no alert',
        where: 'web',
        argv: bash('ls /data'),
        exit: 0,
        stdout: /^hello\.txt$/m,
        alert: null,
      },
      {
        title: 'dash runs another binary: runs, no alert',
        where: 'web',
        argv: bash('/bin/dash -c "id -u"'),
        exit: 0,
        stdout: /^0$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Audit a file directory',
    peer: 'e2e 2; ksp file directory audit',
    policies: [
      pod('audit-data', NS_A, { app: 'db' }, 'Audit', '  file:\n    matchDirectories:\n    - dir: /data/'),
    ],
    steps: [
      {
        title: 'cat reads the file and an Audit alert carries the open flags',
        where: 'db',
        argv: ['cat', '/data/hello.txt'],
        exit: 0,
        stdout: /^hello from the image$/m,
        alert: auditAlert('audit-data', 'File', '/data/hello.txt'),
        check: (a) => {
          assert.match(a.Data, /^syscall=SYS_OPENAT fd=-100 flags=O_RDONLY/);
          assert.equal(a.ProcessName, '/usr/bin/cat');
        },
      },
    ],
  },
  {
    title: 'Audit the interpreter of a #! script',
    peer: 'e2e 2b',
    policies: [pod('audit-dash', NS_A, { app: 'db' }, 'Audit', procPaths('/usr/bin/dash'))],
    steps: [
      {
        title: 'the script runs; the interpreter (/bin/sh is dash) yields an Audit alert',
        where: 'db',
        argv: [HOST_TOOL],
        exit: 0,
        stdout: /^tool-ran$/m,
        alert: auditAlert('audit-dash', 'Process', '/usr/bin/dash'),
        check: (a) => assert.equal(a.Data, 'syscall=SYS_EXECVE'),
      },
    ],
  },
  {
    title: 'Block the service-account token directory',
    peer: 'e2e 4',
    policies: [
      pod(
        'block-sa-token',
        NS_B,
        { app: 'api' },
        'Block',
        `  file:\n    matchDirectories:\n    - dir: ${SA_DIR}/\n      recursive: true`,
      ),
    ],
    steps: [
      {
        title: 'cat of the token fails with EPERM and prints nothing of it',
        where: 'api',
        argv: ['cat', `${SA_DIR}/token`],
        exit: 1,
        stderr: /token: Operation not permitted/,
        alert: blockAlert('block-sa-token', 'File', `${SA_DIR}/token`),
      },
      {
        title: 'python3 open() of the token: PermissionError',
        where: 'api',
        argv: ['python3', '-c', `print(open('${SA_DIR}/token').read())`],
        exit: 1,
        stderr: /PermissionError: \[Errno 1\]/,
        alert: blockAlert('block-sa-token', 'File', `${SA_DIR}/token`),
      },
      {
        title: 'other files stay readable, no alert',
        where: 'api',
        argv: ['cat', '/data/hello.txt'],
        exit: 0,
        stdout: /^hello from the image$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Block a file directory recursively',
    peer: 'ksp file directory recursive block',
    policies: [
      pod(
        'block-credentials',
        NS_A,
        { app: 'web' },
        'Block',
        '  file:\n    matchDirectories:\n    - dir: /credentials/\n      recursive: true',
      ),
    ],
    steps: [
      {
        title: 'a file in the directory: denied',
        where: 'web',
        argv: ['cat', '/credentials/password'],
        exit: 1,
        stderr: /password: Operation not permitted/,
        alert: blockAlert('block-credentials', 'File', '/credentials/password'),
      },
      {
        title: 'a file in a subdirectory: denied',
        where: 'web',
        argv: ['cat', '/credentials/keys/priv.key'],
        exit: 1,
        stderr: /priv\.key: Operation not permitted/,
        alert: blockAlert('block-credentials', 'File', '/credentials/keys/priv.key'),
      },
      {
        title: 'a file elsewhere: readable, no alert',
        where: 'web',
        argv: ['cat', '/secret.txt'],
        exit: 0,
        stdout: /^secret file$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Audit a file directory (not recursive)',
    peer: 'ksp file directory audit',
    policies: [
      pod(
        'audit-credentials',
        NS_A,
        { app: 'web' },
        'Audit',
        '  file:\n    matchDirectories:\n    - dir: /credentials/',
      ),
    ],
    steps: [
      {
        title: 'a file in the directory: read, Audit alert',
        where: 'web',
        argv: ['cat', '/credentials/password'],
        exit: 0,
        stdout: /^password file$/m,
        alert: auditAlert('audit-credentials', 'File', '/credentials/password'),
      },
      {
        title: 'a file in a subdirectory: read, no alert',
        where: 'web',
        argv: ['cat', '/credentials/keys/priv.key'],
        exit: 0,
        stdout: /^key file$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Block a file path from one source',
    peer: 'ksp file path block fromSource',
    policies: [
      pod(
        'block-secret-from-cat',
        NS_A,
        { app: 'db' },
        'Block',
        '  file:\n    matchPaths:\n    - path: /secret.txt\n      fromSource:\n      - path: /usr/bin/cat',
      ),
    ],
    steps: [
      {
        title: 'cat: denied',
        where: 'db',
        argv: ['cat', '/secret.txt'],
        exit: 1,
        stderr: /secret\.txt: Operation not permitted/,
        alert: blockAlert('block-secret-from-cat', 'File', '/secret.txt'),
        check: (a) => assert.equal(a.ProcessName, '/usr/bin/cat'),
      },
      {
        title: 'head: reads it, no alert',
        where: 'db',
        argv: ['head', '-n1', '/secret.txt'],
        exit: 0,
        stdout: /^secret file$/m,
        alert: null,
      },
      {
        title: 'python3: reads it, no alert',
        where: 'db',
        argv: ['python3', '-c', "print(open('/secret.txt').read().strip())"],
        exit: 0,
        stdout: /^secret file$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Block a file pattern except read-only access by its owner',
    peer: 'ksp file pattern block ownerOnly readOnly',
    policies: [
      pod(
        'block-secret-owner-ro',
        NS_A,
        { app: 'web' },
        'Block',
        '  file:\n    matchPatterns:\n    - pattern: /home/*/secret_data1.txt\n      ownerOnly: true\n      readOnly: true',
      ),
    ],
    steps: [
      {
        title: 'root reads it: denied',
        where: 'web',
        argv: ['cat', '/home/user1/secret_data1.txt'],
        exit: 1,
        stderr: /secret_data1\.txt: Operation not permitted/,
        alert: blockAlert('block-secret-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
      {
        title: 'the owner reads it: passes, no alert',
        where: 'web',
        user: 'user1',
        argv: ['cat', '/home/user1/secret_data1.txt'],
        exit: 0,
        stdout: /^secret file user1$/m,
        alert: null,
      },
      {
        title: 'root appends to it: denied',
        where: 'web',
        argv: bash('echo root >> /home/user1/secret_data1.txt'),
        exit: 1,
        stderr: /secret_data1\.txt: Operation not permitted/,
        alert: blockAlert('block-secret-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
      {
        title: 'the owner appends to it: denied',
        where: 'web',
        user: 'user1',
        argv: bash('echo user1 >> /home/user1/secret_data1.txt'),
        exit: 1,
        stderr: /secret_data1\.txt: Operation not permitted/,
        alert: blockAlert('block-secret-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
    ],
  },
  {
    title: 'Block a directory recursively except read-only access by the owner',
    peer: 'ksp file directory recursive block ownerOnly readOnly',
    policies: [
      pod(
        'block-home-owner-ro',
        NS_A,
        { app: 'db' },
        'Block',
        '  file:\n    matchDirectories:\n    - dir: /home/user1/\n      recursive: true\n      ownerOnly: true\n      readOnly: true',
        7,
      ),
    ],
    steps: [
      {
        title: 'root reads a file in a subdirectory: denied',
        where: 'db',
        argv: ['cat', '/home/user1/dir1/key1.txt'],
        exit: 1,
        stderr: /key1\.txt: Operation not permitted/,
        alert: blockAlert('block-home-owner-ro', 'File', '/home/user1/dir1/key1.txt'),
      },
      {
        title: 'the owner reads a file: passes, no alert',
        where: 'db',
        user: 'user1',
        argv: ['cat', '/home/user1/secret_data1.txt'],
        exit: 0,
        stdout: /^secret file user1$/m,
        alert: null,
      },
      {
        title: 'the owner reads a file in a subdirectory: passes, no alert',
        where: 'db',
        user: 'user1',
        argv: ['cat', '/home/user1/dir1/key1.txt'],
        exit: 0,
        stdout: /^key file 1$/m,
        alert: null,
      },
      {
        title: 'root appends to a file: denied',
        where: 'db',
        argv: bash('echo root >> /home/user1/secret_data1.txt'),
        exit: 1,
        stderr: /secret_data1\.txt: Operation not permitted/,
        alert: blockAlert('block-home-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
      {
        title: 'the owner appends to a file: denied',
        where: 'db',
        user: 'user1',
        argv: bash('echo user1 >> /home/user1/secret_data1.txt'),
        exit: 1,
        stderr: /secret_data1\.txt: Operation not permitted/,
        alert: blockAlert('block-home-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
      {
        title: 'the owner appends to a file in a subdirectory: denied',
        where: 'db',
        user: 'user1',
        argv: bash('echo user1 >> /home/user1/dir1/key1.txt'),
        exit: 1,
        stderr: /key1\.txt: Operation not permitted/,
        alert: blockAlert('block-home-owner-ro', 'File', '/home/user1/dir1/key1.txt'),
      },
    ],
  },
  {
    title: 'Block a directory (not recursive) except read-only access by the owner',
    peer: 'ksp file directory block ownerOnly readOnly',
    policies: [
      pod(
        'block-home-top-owner-ro',
        NS_A,
        { app: 'db' },
        'Block',
        '  file:\n    matchDirectories:\n    - dir: /home/user1/\n      ownerOnly: true\n      readOnly: true',
      ),
    ],
    steps: [
      {
        title: 'root reads a file of the directory: denied',
        where: 'db',
        argv: ['cat', '/home/user1/secret_data1.txt'],
        exit: 1,
        stderr: EPERM,
        alert: blockAlert('block-home-top-owner-ro', 'File', '/home/user1/secret_data1.txt'),
      },
      {
        title: 'the owner reads it: passes, no alert',
        where: 'db',
        user: 'user1',
        argv: ['cat', '/home/user1/secret_data1.txt'],
        exit: 0,
        stdout: /^secret file user1$/m,
        alert: null,
      },
      {
        title: 'root reads a file of a subdirectory: passes, no alert',
        where: 'db',
        argv: ['cat', '/home/user1/dir1/key1.txt'],
        exit: 0,
        stdout: /^key file 1$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Audit writes to a file (readOnly)',
    peer: 'ksp file path audit readOnly',
    policies: [
      pod(
        'audit-password-writes',
        NS_A,
        { app: 'web' },
        'Audit',
        '  file:\n    matchPaths:\n    - path: /credentials/password\n      readOnly: true',
      ),
    ],
    steps: [
      {
        title: 'a read: passes, no alert',
        where: 'web',
        argv: ['cat', '/credentials/password'],
        exit: 0,
        stdout: /^password file$/m,
        alert: null,
      },
      {
        title: 'an append: passes, Audit alert',
        where: 'web',
        argv: bash('echo more >> /credentials/password && tail -n1 /credentials/password'),
        exit: 0,
        stdout: /^more$/m,
        alert: auditAlert('audit-password-writes', 'File', '/credentials/password'),
        check: (a) => assert.match(a.Data, /O_WRONLY/),
      },
    ],
  },
  {
    title: 'Block a process path except for its owner',
    peer: 'ksp process path block ownerOnly',
    policies: [
      pod(
        'block-hello-owner',
        NS_A,
        { app: 'web' },
        'Block',
        '  process:\n    matchPaths:\n    - path: /home/user1/hello\n      ownerOnly: true',
        7,
      ),
    ],
    steps: [
      {
        title: 'root runs it: denied',
        where: 'web',
        argv: bash('/home/user1/hello helloworld'),
        exit: 126,
        stderr: /hello: Operation not permitted/,
        alert: blockAlert('block-hello-owner', 'Process', '/home/user1/hello'),
      },
      {
        title: 'the owner runs it: passes, no alert',
        where: 'web',
        user: 'user1',
        argv: bash('/home/user1/hello helloworld'),
        exit: 0,
        stdout: /^helloworld$/m,
        alert: null,
      },
      {
        title: 'after execs as another user, a folder of the image is still copied up on a create, no alert',
        where: 'web',
        argv: bash(
          'mkdir /usr/share/doc/bash/rtctl-peer && touch /usr/share/doc/bash/rtctl-peer/f && echo created',
        ),
        exit: 0,
        stdout: /^created$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Block the creation of a file',
    peer: 'fanotify: the open is asked after O_CREAT made the file',
    policies: [pod('block-new-file', NS_A, { app: 'db' }, 'Block', filePaths('/data/denied-new.txt'))],
    steps: [
      {
        title: 'a redirection that creates it: EPERM, Block alert',
        where: 'db',
        argv: bash('echo x > /data/denied-new.txt'),
        exit: 1,
        stderr: /denied-new\.txt: Operation not permitted/,
        alert: blockAlert('block-new-file', 'File', '/data/denied-new.txt'),
      },
      {
        title: 'the file was created and left empty (stat opens nothing: no alert)',
        where: 'db',
        argv: ['stat', '-c', '%s', '/data/denied-new.txt'],
        exit: 0,
        stdout: /^0$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Allow list of processes, namespace posture block',
    peer: 'e2e 3 (block); ksp allow process paths with default posture',
    policies: [ALLOW_BASICS, namespaceDoc(NS_B, 'block')],
    steps: [
      {
        title: 'listed binaries run (bash, ls), no alert',
        where: 'api',
        argv: bash('ls /data'),
        exit: 0,
        stdout: /^hello\.txt$/m,
        alert: null,
      },
      {
        title: 'an unlisted binary from bash: exit 126, DefaultPosture Block alert',
        where: 'api',
        argv: bash('sleep 0'),
        exit: 126,
        stderr: /\/usr\/bin\/sleep: Operation not permitted/,
        alert: blockAlert('DefaultPosture', 'Process', '/usr/bin/sleep'),
      },
      {
        title: 'an unlisted interpreter started by runc: the exec fails, DefaultPosture Block alert',
        where: 'api',
        argv: ['python3', '-c', 'print(1)'],
        exit: 'nonzero',
        stderr: /operation not permitted/i,
        alert: blockAlert('DefaultPosture', 'Process', '/usr/bin/python3.11'),
      },
    ],
  },
  {
    title: 'Allow list of processes, namespace posture audit',
    peer: 'e2e 3 (audit)',
    policies: [ALLOW_BASICS, namespaceDoc(NS_B, 'audit')],
    steps: [
      {
        title: 'an unlisted binary runs and yields a DefaultPosture Audit alert',
        where: 'api',
        argv: bash('sleep 0; echo rc=$?'),
        exit: 0,
        stdout: /^rc=0$/m,
        alert: auditAlert('DefaultPosture', 'Process', '/usr/bin/sleep'),
      },
      {
        title: 'listed binaries: no alert',
        where: 'api',
        argv: ['cat', '/data/hello.txt'],
        exit: 0,
        stdout: /^hello from the image$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Allow a process path to its owner only, posture block',
    peer: 'ksp allow process path ownerOnly',
    policies: [
      pod(
        'allow-hello-owner',
        NS_B,
        { app: 'api' },
        'Allow',
        `  process:\n    matchPaths:\n    - path: /home/user1/hello\n      ownerOnly: true\n    - path: ${LOADER}\n    matchDirectories:\n    - dir: /usr/bin/\n      recursive: true`,
      ),
      namespaceDoc(NS_B, 'block'),
    ],
    steps: [
      {
        title: 'root runs it: denied by the posture',
        where: 'api',
        argv: bash('/home/user1/hello helloworld'),
        exit: 126,
        stderr: /hello: Operation not permitted/,
        alert: blockAlert('DefaultPosture', 'Process', '/home/user1/hello'),
      },
      {
        title: 'the owner runs it: passes, no alert',
        where: 'api',
        user: 'user1',
        argv: bash('/home/user1/hello helloworld'),
        exit: 0,
        stdout: /^helloworld$/m,
        alert: null,
      },
    ],
  },
  {
    title: 'Allow list of files, posture block',
    peer: 'ksp allow file directories with default posture',
    policies: [
      pod(
        'allow-credentials-files',
        NS_B,
        { app: 'api' },
        'Allow',
        [
          '  file:',
          '    matchDirectories:',
          '    - dir: /credentials/',
          '      recursive: true',
          // What a dynamically linked binary opens before main: the loader's cache, libraries, locales.
          '    - dir: /usr/lib/',
          '      recursive: true',
          '    matchPaths:',
          '    - path: /etc/ld.so.cache',
          // runc resolves the exec's user from the image's account files; glibc reads its name-service and
          // locale configuration.
          '    - path: /etc/passwd',
          '    - path: /etc/group',
          '    - path: /etc/nsswitch.conf',
          '    - path: /etc/locale.alias',
        ].join('\n'),
      ),
      namespaceDoc(NS_B, 'block'),
    ],
    steps: [
      {
        title: 'a listed file: read, no alert',
        where: 'api',
        argv: ['cat', '/credentials/password'],
        exit: 0,
        stdout: /^password file/m,
        alert: null,
      },
      {
        title: 'an unlisted file: denied, DefaultPosture Block alert',
        where: 'api',
        argv: ['cat', '/etc/hostname'],
        exit: 1,
        stderr: /hostname: Operation not permitted/,
        alert: blockAlert('DefaultPosture', 'File', '/etc/hostname'),
      },
    ],
  },
  {
    title: 'Host policies',
    peer: 'e2e 5; hsp process path block, file path block fromSource',
    policies: [
      host('host-block-tool', 'Block', procPaths(HOST_TOOL)),
      host(
        'host-block-secret-from-cat',
        'Block',
        `  file:\n    matchPaths:\n    - path: ${HOST_WORK}/secret\n      fromSource:\n      - path: /usr/bin/cat`,
      ),
      HOST_SENTINEL_POLICY,
    ],
    steps: [
      {
        title: 'a host process runs the tool: exit 126, MatchedHostPolicy Block alert',
        where: 'host',
        argv: ['/bin/sh', '-c', HOST_TOOL],
        exit: 126,
        stderr: EPERM,
        alert: blockAlert('host-block-tool', 'Process', HOST_TOOL),
        check: (a) => {
          assert.equal(a.Type, 'MatchedHostPolicy');
          assert.equal(a.HostPID, a.PID);
          assert.equal(a.HostName, NODE);
        },
      },
      {
        title: 'the same path in a container: runs, no alert',
        where: 'web',
        argv: [HOST_TOOL],
        exit: 0,
        stdout: /^tool-ran$/m,
        alert: null,
      },
      {
        title: 'cat of the host file: denied',
        where: 'host',
        argv: ['/usr/bin/cat', `${HOST_WORK}/secret`],
        exit: 1,
        stderr: EPERM,
        alert: blockAlert('host-block-secret-from-cat', 'File', `${HOST_WORK}/secret`),
      },
      {
        title: 'head of the host file: reads it, no alert',
        where: 'host',
        argv: ['/usr/bin/head', '-n1', `${HOST_WORK}/secret`],
        exit: 0,
        stdout: /^host secret$/m,
        alert: null,
      },
    ],
  },
];

/** Policy update and deletion without a restart (e2e 6), as three consecutive policy sets. */
const UPDATES: Scenario[] = [
  {
    title: 'Policy update: the same policy now blocks cat instead of sleep',
    peer: 'e2e 6 (update)',
    policies: [pod('change-me', NS_A, { app: 'web' }, 'Block', procPaths('/usr/bin/cat'))],
    steps: [
      {
        title: 'sleep runs again, no alert',
        where: 'web',
        argv: bash('sleep 0; echo rc=$?'),
        exit: 0,
        stdout: /^rc=0$/m,
        alert: null,
      },
      {
        title: 'cat is denied',
        where: 'web',
        argv: bash('cat /data/hello.txt'),
        exit: 126,
        stderr: /cat: Operation not permitted/,
        alert: blockAlert('change-me', 'Process', '/usr/bin/cat'),
      },
    ],
  },
  {
    title: 'Policy deletion',
    peer: 'e2e 6 (deletion)',
    policies: [],
    steps: [
      {
        title: 'cat runs again, no alert',
        where: 'web',
        argv: bash('cat /data/hello.txt'),
        exit: 0,
        stdout: /^hello from the image$/m,
        alert: null,
      },
    ],
  },
];

describe('peer scenarios with real binaries (Debian containers, containerd, runc, fanotify)', function () {
  this.timeout(120000);
  let env: DebianEnv | undefined;
  let enforcer: EnforcerProcess | undefined;
  let createdHostTool = false;

  const url = (): string => enforcer?.url ?? '';

  before(async function () {
    this.timeout(30 * 60 * 1000);
    env = await startDebianEnv(this, 'rtctl-peer-');
    const sa = join(env.work, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'eyJhbGciOiJSUzI1NiJ9.peer-test-token\n');
    for (const c of Object.values(CONTAINERS)) {
      await env.run({
        id: c.id,
        pod: c.pod,
        namespace: c.namespace,
        container: c.container,
        labels: { ...c.labels, suite: 'peer' },
        mounts: c.namespace === NS_B ? [{ source: sa, destination: SA_DIR }] : [],
      });
      const setup = await execIn(env.cd, c.id, ['bash', '-c', SETUP]);
      assert.equal(setup.code, 0, setup.stderr);
      // Looked up now, so that the lookup's exec of id is not part of any step.
      await resolveUser(env.cd, c.id, 'user1');
    }
    mkdirSync(HOST_WORK, { recursive: true });
    writeFileSync(join(HOST_WORK, 'secret'), 'host secret\n');
    writeFileSync(HOST_SENTINEL, 'sentinel\n');
    if (!existsSync(HOST_TOOL)) {
      mkdirSync('/usr/local/bin', { recursive: true });
      writeFileSync(HOST_TOOL, TOOL_SCRIPT);
      chmodSync(HOST_TOOL, 0o755);
      createdHostTool = true;
    }
    enforcer = await env.startEnforcer(['--node-name', NODE, '--cluster-name', CLUSTER]);
  });

  after(async function () {
    this.timeout(120000);
    await env?.stop();
    if (createdHostTool) rmSync(HOST_TOOL, { force: true });
    rmSync(HOST_WORK, { recursive: true, force: true });
  });

  /** Runs a step's command in its container, or on the host. */
  async function run(st: Step): Promise<{ code: number; stdout: string; stderr: string }> {
    if (st.where === 'host') {
      const [cmd, ...args] = st.argv;
      const r = spawnSync(cmd ?? '', args, { encoding: 'utf8', timeout: 20000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    }
    if (!env) throw new Error('not started');
    return execIn(env.cd, CONTAINERS[st.where].id, st.argv, st.user === undefined ? {} : { user: st.user });
  }

  const podOf = (w: Where): string => (w === 'host' ? '' : CONTAINERS[w].pod);
  const nsOf = (w: Where): string => (w === 'host' ? '' : CONTAINERS[w].namespace);
  const show = (a: AlertRecord): string =>
    `${a.PolicyName} ${a.Action} ${a.Operation} ${a.Resource} ${a.Result}`;

  /** Waits until the sentinel read of this workload after `since` is reported. */
  async function barrier(w: Where, since: number): Promise<void> {
    const file = w === 'host' ? HOST_SENTINEL : SENTINEL;
    // bash's own redirection, not cat: cat is a binary some scenarios block.
    const r = await run({
      title: 'sentinel',
      where: w,
      argv: ['bash', '-c', `read -r _ < ${file}`],
      exit: 0,
      alert: null,
    });
    assert.equal(r.code, 0, `sentinel read: ${r.stderr}`);
    await waitForAlert(
      url(),
      (a) => a.Resource === file && a.PodName === podOf(w) && Date.parse(a.UpdatedTime) >= since,
      15000,
    );
  }

  function defineScenario(sc: Scenario): void {
    describe(`${sc.title} [${sc.peer}]`, () => {
      before(async function () {
        if (!env || !enforcer) this.skip();
        const files: Record<string, string> = {};
        for (const p of [...SENTINELS, ...sc.policies]) files[p.name] = p.text;
        if (sc.steps.some((s) => s.where === 'host') && !sc.policies.includes(HOST_SENTINEL_POLICY))
          files[HOST_SENTINEL_POLICY.name] = HOST_SENTINEL_POLICY.text;
        const nameOf = (p: PolicyFile): string => /^ {2}name: (\S+)$/m.exec(p.text)?.[1] ?? p.name;
        // The set is replaced file by file (removed, then written), so the enforcer may apply states in
        // between: wait for the one whose applied policies are exactly these (the scenario's and the
        // sentinel's, which every barrier needs), not merely a newer one (a deletion names no policy).
        const required = [...sc.policies, ...SENTINELS].filter((p) => !p.name.startsWith('ns-')).map(nameOf);
        const allowed = new Set(
          Object.entries(files)
            .filter(([f]) => !f.startsWith('ns-'))
            .map(([f, text]) => nameOf({ name: f, text })),
        );
        await env.setPolicies(files, (s) => {
          const applied = new Set(s.workloads.flatMap((w) => w.policies));
          return required.every((n) => applied.has(n)) && [...applied].every((n) => allowed.has(n));
        });
      });

      for (const st of sc.steps) {
        it(`${st.title}`, async function () {
          this.timeout(60000);
          const since = Date.now() - 1;
          const r = await run(st);
          const out = `exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`;
          const mine = (a: AlertRecord): boolean =>
            a.PodName === podOf(st.where) && Date.parse(a.UpdatedTime) >= since;
          try {
            if (st.exit === 'nonzero') assert.notEqual(r.code, 0, out);
            else assert.equal(r.code, st.exit, out);
            if (st.stdout) assert.match(r.stdout, st.stdout, out);
            if (st.stderr) assert.match(r.stderr, st.stderr, out);
          } catch (err) {
            // Say which alerts the command yielded: they usually tell why.
            const seen = (await fetchAlerts(url())).filter(mine).map(show);
            throw new Error(`${(err as Error).message}; alerts of the step: ${JSON.stringify(seen)}`, {
              cause: err,
            });
          }
          const logsArgs =
            st.where === 'host' ? ['--operation', st.alert?.operation ?? 'File'] : ['-n', nsOf(st.where)];
          if (st.alert) {
            const e = st.alert;
            const matches = (a: AlertRecord): boolean =>
              mine(a) &&
              a.PolicyName === e.policy &&
              a.Action === e.action &&
              a.Operation === e.operation &&
              a.Resource === e.resource;
            await waitForAlert(url(), matches, 15000).catch(async (err: unknown) => {
              const seen = (await fetchAlerts(url())).filter(mine).map(show);
              throw new Error(`${String(err)}: ${out}; alerts of the step: ${JSON.stringify(seen)}`);
            });
            const a = readLogs(url(), logsArgs).find(matches);
            assert.ok(a, `rtctl logs ${logsArgs.join(' ')} --json shows the alert`);
            assert.equal(a.Result, e.action === 'Block' ? 'Operation not permitted' : 'Passed');
            assert.equal(a.Enforcer, 'Fanotify');
            assert.equal(a.NamespaceName, nsOf(st.where));
            if (st.where !== 'host') assert.equal(a.ContainerName, CONTAINERS[st.where].container);
            st.check?.(a);
          } else {
            await barrier(st.where, since);
            const sentinel = st.where === 'host' ? HOST_SENTINEL : SENTINEL;
            const extra = readLogs(url(), logsArgs).filter((a) => mine(a) && a.Resource !== sentinel);
            assert.deepEqual(extra.map(show), [], `no alert for the step (${out})`);
          }
        });
      }
    });
  }

  defineScenario({
    title: 'Policy update (before): block sleep',
    peer: 'e2e 6 (initial)',
    policies: [pod('change-me', NS_A, { app: 'web' }, 'Block', procPaths('/usr/bin/sleep'))],
    steps: [
      {
        title: 'sleep is denied',
        where: 'web',
        argv: bash('sleep 0'),
        exit: 126,
        stderr: EPERM,
        alert: blockAlert('change-me', 'Process', '/usr/bin/sleep'),
      },
    ],
  });
  for (const sc of UPDATES) defineScenario(sc);
  for (const sc of SCENARIOS) defineScenario(sc);

  it('has at least 60 expectations', () => {
    const steps = [...SCENARIOS, ...UPDATES].reduce((n, s) => n + s.steps.length, 1);
    assert.ok(steps >= 60, `${steps} steps`);
  });
});
