// Boots the test guest under qemu (TCG software emulation: nested KVM is unusable here) with the host's
// root shared read-only over 9p, runs one shell command inside it as root, and returns the command's
// stdout, stderr and exit status plus the serial console. Boot failures come back as errors, never as
// an empty success.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hasCommand } from '../support/prereq.js';
import { prepareGuestKernel } from './guest-kernel.js';

/** What to run in the guest. */
export interface GuestJob {
  repoRoot: string;
  /** A shell command line, run by /bin/sh in `cwd` (default: repoRoot) as root. */
  command: string;
  cwd?: string;
  /** Extra environment for the command. */
  env?: Record<string, string>;
  /** Kill the guest after this long (default 15 minutes). */
  timeoutMs?: number;
  memoryMiB?: number;
  cpus?: number;
  /** Called with serial console text as it arrives. */
  onConsole?: (text: string) => void;
  /** Instruction-counted virtual time (see {@link GuestIcount}); absent: the guest's clocks follow the host. */
  icount?: GuestIcount;
}

/**
 * qemu's instruction counting: single-threaded TCG with `-icount shift=N,sleep=off,align=off`. The guest's
 * clocks then advance by 2^shift ns per guest instruction executed (and jump over idle time), independent
 * of the host's speed and load: a guest-timed loop measures guest instructions, every one costing the same
 * (no cache, TLB or branch effects). vCPUs run round-robin on one host thread, and every vCPU's
 * instructions advance the one virtual clock, so the guest gets one vCPU unless `cpus` says otherwise.
 */
export interface GuestIcount {
  /** 0-10 (qemu's range): virtual nanoseconds per instruction = 2^shift. */
  shift: number;
}

/** What {@link guestQemuArgs} needs: the prepared kernel, the stage-2 script and the shared directories. */
export interface GuestQemuInput {
  kernel: string;
  initrd: string;
  stage2: string;
  outDir: string;
  repoRoot: string;
  memoryMiB?: number;
  cpus?: number;
  icount?: GuestIcount;
}

/** qemu's largest -icount shift (7.2 refuses 11: "Invalid shift value"). */
export const MAX_ICOUNT_SHIFT = 10;

/** The outcome of a guest run. `exitCode` is the command's, read back from the exchange share. */
export interface GuestResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  console: string;
  /** The exchange directory (files the command wrote to $RTCTL_GUEST_OUT stay there). */
  outDir: string;
  bootMs: number;
  totalMs: number;
}

/** Quotes a string for /bin/sh. */
export function quoteShell(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Active LSMs of the guest kernel: Debian's list with bpf added last. */
const GUEST_LSMS = 'landlock,lockdown,yama,integrity,apparmor,bpf';

/** The qemu command line of a guest run (pure: the same input gives the same arguments). Without `icount`
 * it is the default boot's; with it, single-threaded TCG, `-icount shift=N,sleep=off,align=off` and one vCPU
 * unless `cpus` is given. Rejects a shift outside qemu's 0-10. */
export function guestQemuArgs(input: GuestQemuInput): string[] {
  const icount = input.icount;
  if (
    icount !== undefined &&
    !(Number.isInteger(icount.shift) && icount.shift >= 0 && icount.shift <= MAX_ICOUNT_SHIFT)
  )
    throw new RangeError(
      `icount shift must be an integer from 0 to ${MAX_ICOUNT_SHIFT}, got ${String(icount.shift)}`,
    );
  const args = [
    '-accel',
    icount === undefined ? 'tcg' : 'tcg,thread=single',
    '-cpu',
    'max',
    '-m',
    `${input.memoryMiB ?? 2048}M`,
    '-smp',
    `${input.cpus ?? (icount === undefined ? 2 : 1)}`,
    '-display',
    'none',
    '-monitor',
    'none',
    '-serial',
    'stdio',
    '-no-reboot',
    '-nic',
    'none',
    '-kernel',
    input.kernel,
    '-initrd',
    input.initrd,
    '-append',
    `console=ttyS0 panic=-1 loglevel=4 lsm=${GUEST_LSMS} rtctl.stage2=${input.stage2}`,
    '-virtfs',
    'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap',
    '-virtfs',
    `local,path=${input.outDir},mount_tag=guestout,security_model=none,multidevs=remap`,
    '-virtfs',
    `local,path=${input.repoRoot},mount_tag=repo,security_model=none,readonly=on,multidevs=remap`,
  ];
  if (icount !== undefined) args.push('-icount', `shift=${icount.shift},sleep=off,align=off`);
  return args;
}

/** Boots the guest, runs the job, powers off. Rejects when the guest fails to boot or to report. */
export async function runInGuest(job: GuestJob): Promise<GuestResult> {
  const started = Date.now();
  const guest = prepareGuestKernel(job.repoRoot);
  // Exchange directories of earlier runs (kept for inspection) go after an hour.
  for (const old of readdirSync(guest.workDir)) {
    const dir = path.join(guest.workDir, old);
    if (old.startsWith('run-') && statSync(dir).mtimeMs < started - 3_600_000)
      rmSync(dir, { recursive: true, force: true });
  }
  const outDir = path.join(guest.workDir, `run-${process.pid}-${started}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const env: Record<string, string> = {
    HOME: '/root',
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    RTCTL_GUEST: '1',
    RTCTL_GUEST_OUT: '/run/guest-out',
    ...(process.env['CI'] !== undefined ? { CI: process.env['CI'] } : {}),
    ...job.env,
  };
  const lines = ['set -u'];
  for (const [k, v] of Object.entries(env)) lines.push(`export ${k}=${quoteShell(v)}`);
  lines.push(`cd ${quoteShell(job.cwd ?? job.repoRoot)} || exit 125`, job.command, '');
  writeFileSync(path.join(outDir, 'job.sh'), lines.join('\n'));
  writeFileSync(path.join(outDir, 'modules-dir'), guest.modulesDir);
  // The guest mounts tmpfs over /tmp, /root, /var/lib, ...: a checkout below one of them (CI may clone into
  // /tmp) is shared once more on its own and mounted back at the same path.
  writeFileSync(path.join(outDir, 'repo-dir'), job.repoRoot);

  const args = guestQemuArgs({
    kernel: guest.kernel,
    initrd: guest.initrd,
    stage2: path.join(job.repoRoot, 'test', 'guest', 'guest-stage2.sh'),
    outDir,
    repoRoot: job.repoRoot,
    ...(job.memoryMiB !== undefined ? { memoryMiB: job.memoryMiB } : {}),
    ...(job.cpus !== undefined ? { cpus: job.cpus } : {}),
    ...(job.icount !== undefined ? { icount: job.icount } : {}),
  });
  let consoleText = '';
  let bootMs = 0;
  const timeoutMs = job.timeoutMs ?? 15 * 60_000;
  const exit = await new Promise<{ code: number | null; timedOut: boolean }>((resolve, reject) => {
    // qemu must not outlive this process (mocha --exit, Ctrl-C, a killed run): the kernel kills it when its
    // parent goes (setpriv --pdeathsig, util-linux), and an exit handler covers a missing setpriv.
    const child = hasCommand('setpriv')
      ? spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'qemu-system-x86_64', ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      consoleText += text;
      if (bootMs === 0 && consoleText.includes('RTCTL-GUEST-READY')) bootMs = Date.now() - started;
      job.onConsole?.(text);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => {
      clearTimeout(timer);
      process.removeListener('exit', killOnExit);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      process.removeListener('exit', killOnExit);
      resolve({ code, timedOut });
    });
  });
  const tail = consoleText.slice(-4000);
  const failure = /RTCTL-GUEST-FAIL: (.*)/.exec(consoleText);
  if (failure) throw new Error(`guest boot failed: ${failure[1] ?? ''}\n--- console tail ---\n${tail}`);
  const exitFile = path.join(outDir, 'exit');
  if (!existsSync(exitFile)) {
    const why = exit.timedOut ? `timed out after ${timeoutMs} ms` : `qemu exited with ${String(exit.code)}`;
    throw new Error(`guest produced no exit status (${why})\n--- console tail ---\n${tail}`);
  }
  const read = (f: string): string =>
    existsSync(path.join(outDir, f)) ? readFileSync(path.join(outDir, f), 'utf8') : '';
  return {
    exitCode: Number.parseInt(read('exit').trim(), 10),
    stdout: read('stdout'),
    stderr: read('stderr'),
    console: consoleText,
    outDir,
    bootMs,
    totalMs: Date.now() - started,
  };
}
