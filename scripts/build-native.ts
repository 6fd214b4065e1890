// `npm run build:native`: compiles every native artifact into dist/native/ at build time (also run by
// `npm run build` and before `npm test`): the fanotify helper and the BPF-LSM trial probe
// (enforcer/native/build.sh), the BPF-LSM programs and their libbpf loader (enforcer/bpf/build.sh), and the
// IMDS ip-ttl N-API addon (imds/native/build-addon.ts). Incremental: each step rebuilds only what is older
// than its sources. A missing optional toolchain (clang, bpftool, libbpf, Node headers) skips that artifact
// with the reason, recorded in dist/native/build-native.json for runtime errors and test skips; a compile
// error with the toolchain present fails the build.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIpTtlAddon } from '../imds/native/build-addon.js';
import {
  NATIVE_BUILD_RECORD,
  NativeArtifact,
  findNativeDir,
  findPackageRoot,
  type NativeBuildEntry,
} from '../enforcer/io/native-tools.js';

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Runs a build script with the output folder as its argument. */
function runScript(script: string, out: string): { ok: true; output: string } | { ok: false; error: string } {
  const r = spawnSync('sh', [script, out], { encoding: 'utf8' });
  if (r.status === 0) return { ok: true, output: r.stdout };
  return { ok: false, error: `${script} exited ${r.status ?? r.signal}: ${r.stderr.trim().slice(-4000)}` };
}

const root = findPackageRoot();
const out = findNativeDir();
mkdirSync(out, { recursive: true });
const artifacts: Record<string, NativeBuildEntry> = {};
const cc = process.env['CC'] ?? 'cc';
let failed = false;

/** Marks artifacts built, up to date or failed from one build step. */
function record(
  names: string[],
  step: () => { ok: true; rebuilt: boolean } | { ok: false; error: string },
): void {
  const r = step();
  for (const name of names) {
    if (r.ok) artifacts[name] = { status: r.rebuilt ? 'built' : 'up-to-date' };
    else artifacts[name] = { status: 'failed', reason: r.error };
  }
  if (!r.ok) failed = true;
}

function skip(names: string[], reason: string): void {
  for (const name of names) artifacts[name] = { status: 'skipped', reason };
}

/** Modification time and size of a file, '' when absent: a changed fingerprint means it was rebuilt. */
function fingerprint(file: string): string {
  if (!existsSync(file)) return '';
  const st = statSync(file);
  return `${st.mtimeMs}:${st.size}`;
}

/** A build step through a shell script that rebuilds incrementally; `rebuilt` when an output changed. */
function scriptStep(
  script: string,
  dir: string,
  outputs: string[],
): () => { ok: true; rebuilt: boolean } | { ok: false; error: string } {
  return () => {
    const before = outputs.map(fingerprint);
    const r = runScript(script, dir);
    if (!r.ok) return r;
    const after = outputs.map(fingerprint);
    return { ok: true, rebuilt: before.some((b, i) => b !== after[i]) };
  };
}

// fanotify helper and BPF-LSM trial probe: a C compiler.
const helperOutputs = [NativeArtifact.fanotifyHelper, NativeArtifact.bpfLsmProbe];
if (hasCommand(cc)) {
  record(
    helperOutputs,
    scriptStep(
      join(root, 'enforcer/native/build.sh'),
      out,
      helperOutputs.map((a) => join(out, a)),
    ),
  );
} else {
  skip(helperOutputs, `no C compiler (${cc})`);
}

// BPF-LSM programs and loader: clang, bpftool, libbpf headers and the build machine's BTF.
const btf = process.env['RTCTL_BTF'] ?? '/sys/kernel/btf/vmlinux';
const bpfMissing = [
  hasCommand('clang') ? '' : 'clang',
  hasCommand('bpftool') ? '' : 'bpftool',
  hasCommand('gcc') ? '' : 'gcc',
  existsSync('/usr/include/bpf/libbpf.h') ? '' : 'libbpf headers (libbpf-dev)',
  existsSync(btf) ? '' : `kernel BTF (${btf}; set RTCTL_BTF)`,
].filter((m) => m !== '');
if (bpfMissing.length === 0) {
  record(
    [NativeArtifact.bpfLoader],
    scriptStep(join(root, 'enforcer/bpf/build.sh'), join(out, 'bpf'), [join(out, NativeArtifact.bpfLoader)]),
  );
} else {
  skip([NativeArtifact.bpfLoader], `missing ${bpfMissing.join(', ')} (.ci/packages/bpf.txt)`);
}

// cgroup network plane programs and loader: the same toolchain as BPF-LSM.
const networkOutputs = [NativeArtifact.networkLoader, NativeArtifact.networkObject];
if (bpfMissing.length === 0) {
  record(
    networkOutputs,
    scriptStep(
      join(root, 'enforcer/network/build.sh'),
      join(out, 'network'),
      networkOutputs.map((a) => join(out, a)),
    ),
  );
} else {
  skip(networkOutputs, `missing ${bpfMissing.join(', ')} (.ci/packages/bpf.txt)`);
}

// System call audit plane programs and loader: the same toolchain as BPF-LSM.
const syscallOutputs = [NativeArtifact.syscallLoader, NativeArtifact.syscallObject];
if (bpfMissing.length === 0) {
  record(
    syscallOutputs,
    scriptStep(
      join(root, 'enforcer/syscalls/build.sh'),
      join(out, 'syscalls'),
      syscallOutputs.map((a) => join(out, a)),
    ),
  );
} else {
  skip(syscallOutputs, `missing ${bpfMissing.join(', ')} (.ci/packages/bpf.txt)`);
}

// IMDS ip-ttl addon: a C compiler and the Node headers.
const addon = buildIpTtlAddon(cc);
if (addon.ok) artifacts['ip-ttl.node'] = { status: addon.rebuilt ? 'built' : 'up-to-date' };
else if (addon.missing) skip(['ip-ttl.node'], addon.error);
else {
  artifacts['ip-ttl.node'] = { status: 'failed', reason: addon.error };
  failed = true;
}

writeFileSync(join(out, NATIVE_BUILD_RECORD), `${JSON.stringify({ artifacts }, null, 2)}\n`);
for (const [name, entry] of Object.entries(artifacts)) {
  const line = `build:native: ${name}: ${entry.status}${entry.reason !== undefined ? ` (${entry.reason})` : ''}\n`;
  (entry.status === 'failed' ? process.stderr : process.stdout).write(line);
}
if (failed) process.exitCode = 1;
