// `rtctl probe`: which data planes and LSMs this kernel supports, each decided by a trial (load, mark,
// parse) rather than by configuration alone. The checks run programs and read /sys: this is an I/O module.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { SYSCALL_DENY_ERRNO } from '../compiler/enforcement/syscall-coverage.js';
import { NativeArtifact, locateNativeArtifact } from './io/native-tools.js';
import { findCgroup2Mount } from './network/network-plane.js';

const run = promisify(execFile);

/** One check's outcome. */
export interface ProbeCheck {
  name: string;
  supported: boolean;
  /** What was tried and what happened. */
  detail: string;
  /** Data planes: the errno a caller gets when the plane denies (`EACCES`, `EPERM`). */
  denyErrno?: string;
}

/** The probe report. */
export interface ProbeReport {
  kernel: string;
  /** Active LSMs as the kernel lists them (empty when securityfs is not mounted). */
  lsms: string[];
  checks: ProbeCheck[];
}

interface ToolResult {
  code: number;
  stdout: string;
}

async function runTool(path: string, args: string[] = []): Promise<ToolResult> {
  try {
    const r = await run(path, args);
    return { code: 0, stdout: r.stdout };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; message?: string };
    return { code: typeof e.code === 'number' ? e.code : 127, stdout: e.stdout ?? e.message ?? '' };
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Runs every check. */
export async function probeKernel(): Promise<ProbeReport> {
  const checks: ProbeCheck[] = [];
  const bpfLsmProbe = locateNativeArtifact(NativeArtifact.bpfLsmProbe);
  const fanotifyHelper = locateNativeArtifact(NativeArtifact.fanotifyHelper);

  // BTF: the kernel's type information, which CO-RE programs need.
  const btf = (() => {
    try {
      const b = readFileSync('/sys/kernel/btf/vmlinux');
      return b.byteLength > 24 && b.readUInt16LE(0) === 0xeb9f;
    } catch {
      return false;
    }
  })();
  checks.push({
    name: 'btf',
    supported: btf,
    detail: btf
      ? '/sys/kernel/btf/vmlinux parsed (magic 0xeB9F)'
      : '/sys/kernel/btf/vmlinux missing or not BTF',
  });

  // BPF-LSM: load and attach a trivial LSM program.
  if (bpfLsmProbe.ok) {
    const r = await runTool(bpfLsmProbe.path);
    const j = parseJson(r.stdout);
    checks.push({
      name: 'bpf-lsm',
      supported: r.code === 0 && j['attach'] === true,
      detail: typeof j['reason'] === 'string' ? j['reason'] : r.stdout.trim(),
      denyErrno: 'EACCES',
    });
  } else {
    checks.push({ name: 'bpf-lsm', supported: false, detail: `native probe missing: ${bpfLsmProbe.error}` });
  }

  // fanotify permission events: init a content-class group and mark a mount for FAN_OPEN_EXEC_PERM.
  if (fanotifyHelper.ok) {
    const r = await runTool(fanotifyHelper.path, ['--probe']);
    const j = parseJson(r.stdout);
    // FAN_DENY_ERRNO (6.14+) is accepted only from pre-content groups and only for a few errnos; EACCES is
    // refused (EINVAL) on 6.18, so a content-class listener denies with EPERM (docs/enforcer.md).
    checks.push({
      name: 'fanotify',
      supported: r.code === 0 && j['fanotify'] === true,
      detail: typeof j['reason'] === 'string' ? j['reason'] : r.stdout.trim(),
      denyErrno: 'EPERM',
    });
  } else {
    checks.push({
      name: 'fanotify',
      supported: false,
      detail: `native helper missing: ${fanotifyHelper.error}`,
    });
  }

  // cgroup network plane: load the programs and attach each to a cgroup the probe creates (and removes).
  const netLoader = locateNativeArtifact(NativeArtifact.networkLoader);
  const netObject = locateNativeArtifact(NativeArtifact.networkObject);
  let cgroup2 = '';
  try {
    cgroup2 = findCgroup2Mount();
  } catch {
    // reported below
  }
  if (!netLoader.ok || !netObject.ok) {
    checks.push({
      name: 'network',
      supported: false,
      detail: `native loader missing: ${netLoader.ok ? '' : netLoader.error}${netObject.ok ? '' : netObject.error}`,
    });
  } else if (cgroup2 === '') {
    checks.push({ name: 'network', supported: false, detail: 'no cgroup2 file system is mounted' });
  } else {
    const r = await runTool(netLoader.path, ['--probe', netObject.path, cgroup2]);
    const j = parseJson(r.stdout);
    checks.push({
      name: 'network',
      supported: r.code === 0 && j['network'] === true,
      detail: typeof j['reason'] === 'string' ? j['reason'] : r.stdout.trim(),
      denyErrno: 'EPERM',
    });
  }

  // System call audit plane: load the programs and attach each to its BTF tracepoint (detached on exit).
  const sysLoader = locateNativeArtifact(NativeArtifact.syscallLoader);
  const sysObject = locateNativeArtifact(NativeArtifact.syscallObject);
  if (!sysLoader.ok || !sysObject.ok) {
    checks.push({
      name: 'syscalls',
      supported: false,
      detail: `native loader missing: ${sysLoader.ok ? '' : sysLoader.error}${sysObject.ok ? '' : sysObject.error}`,
    });
  } else {
    const r = await runTool(sysLoader.path, ['--probe', sysObject.path]);
    const j = parseJson(r.stdout);
    // The deny part (LSM hooks) loads by trial: where it does, Block denies the calls a hook covers.
    const deny = j['deny'] === true;
    const lsm = typeof j['lsm'] === 'string' ? j['lsm'] : '';
    const hooks = typeof j['hooks'] === 'number' ? j['hooks'] : 0;
    checks.push({
      name: 'syscalls',
      supported: r.code === 0 && j['syscalls'] === true,
      detail: `${typeof j['reason'] === 'string' ? j['reason'] : r.stdout.trim()}; ${
        deny
          ? `Block denies the calls an LSM hook covers (${hooks} hooks attached), other calls are audited`
          : `system calls are audited, not denied (${lsm === '' ? 'no LSM part' : lsm})`
      }; a blocked filelessExec is killed (SIGKILL) before its first instruction`,
      ...(deny ? { denyErrno: SYSCALL_DENY_ERRNO } : {}),
    });
  }

  // AppArmor: enabled in the kernel and its securityfs interface present, with a parser to load profiles.
  const aaEnabled = readText('/sys/module/apparmor/parameters/enabled') === 'Y';
  const aaFs = existsSync('/sys/kernel/security/apparmor/profiles');
  const aaParser = (await runTool('apparmor_parser', ['--version'])).code === 0;
  checks.push({
    name: 'apparmor',
    supported: aaEnabled && aaFs && aaParser,
    detail: `module enabled: ${aaEnabled ? 'yes' : 'no'}; securityfs interface: ${aaFs ? 'yes' : 'no'}; apparmor_parser: ${aaParser ? 'yes' : 'no'}`,
  });

  // SELinux: selinuxfs mounted and reporting a mode, semodule available.
  const enforce = readText('/sys/fs/selinux/enforce');
  const semodule = (await runTool('semodule', ['--help'])).code !== 127;
  checks.push({
    name: 'selinux',
    supported: enforce !== undefined && semodule,
    detail:
      enforce === undefined
        ? 'selinuxfs not mounted (/sys/fs/selinux/enforce absent)'
        : `mode ${enforce === '1' ? 'enforcing' : 'permissive'}; semodule: ${semodule ? 'yes' : 'no'}`,
  });

  const lsm = readText('/sys/kernel/security/lsm');
  return {
    kernel: readText('/proc/sys/kernel/osrelease') ?? '',
    lsms: lsm ? lsm.split(',').filter((s) => s !== '') : [],
    checks,
  };
}

/** The text form of a probe report. */
export function formatProbeReport(report: ProbeReport): string {
  const lines = [
    `kernel ${report.kernel}`,
    `active LSMs: ${report.lsms.length > 0 ? report.lsms.join(',') : '(unknown: securityfs not mounted)'}`,
  ];
  for (const c of report.checks)
    lines.push(
      `${c.supported ? 'yes' : 'no '}  ${c.name.padEnd(9)} ${c.detail}${c.denyErrno === undefined ? '' : ` (denials: ${c.denyErrno})`}`,
    );
  return `${lines.join('\n')}\n`;
}
