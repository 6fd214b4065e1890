// The Debian package (`npm run build:deb`): installs into a fresh Debian bookworm root file system made with
// mmdebstrap (dpkg -i in a chroot), runs there, removes (dpkg -r: only the conffile, the policy folder and
// deb-systemd-helper's remembered state stay) and purges (dpkg -P) leaving no file behind (file lists
// compared), and lintian reports no errors (its warnings are printed). Set RTCTL_TEST_DEB to test a package
// already built; otherwise the test builds one (several minutes).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';
import { PACKAGED_RTCTL } from '../../../install/systemd/build-deb.js';
import { PACKAGED_UNIT_PATH, renderEnforcerUnit } from '../../../install/systemd/enforcer-unit.js';
import { DEFAULT_ENFORCER_CONFIG } from '../../../install/systemd/default-config.js';
import {
  DEPENDENCY_PACKAGES,
  debianRootfsTar,
  packageUnderTest,
  removeRootfs,
  unpackRootfs,
} from './debian-rootfs.js';

/** Every path below root (one file system), sorted; dpkg's own log and database files left out. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      out.push(relative(root, p));
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(root);
  return out
    .filter((p) => !/^var\/lib\/dpkg\/(status|status-old|available|diversions|lock.*|triggers\/.*)$/.test(p))
    .filter((p) => p !== 'var/log/dpkg.log' && p !== 'var/cache/debconf/config.dat-old')
    .sort();
}

function chroot(root: string, args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync(
    'chroot',
    [root, 'env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C', ...args],
    {
      encoding: 'utf8',
      timeout: 300000,
    },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('Debian package (dpkg-deb, mmdebstrap root file system, lintian)', function () {
  this.timeout(1800000);
  let deb = '';
  let root = '';

  before(function () {
    requirePrereqs(this, [
      [isRoot(), 'root (chroot, dpkg in the chroot)'],
      [hasCommand('dpkg-deb'), 'dpkg-deb'],
      [hasCommand('mmdebstrap'), 'mmdebstrap (apt-get install mmdebstrap)'],
      [hasCommand('lintian'), 'lintian (apt-get install lintian)'],
      [hasCommand('systemd-analyze'), 'systemd-analyze (apt-get install systemd)'],
      [hasCommand('strip'), 'strip (apt-get install binutils)'],
    ]);
    deb = packageUnderTest();
    root = unpackRootfs(debianRootfsTar(DEPENDENCY_PACKAGES));
  });

  after(() => {
    if (root !== '') removeRootfs(root);
  });

  it('holds the wrapper, the runtime, the unit, the configuration as a conffile and the maintainer scripts', () => {
    const contents = execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 << 20 });
    for (const path of [
      './usr/bin/rtctl',
      './usr/lib/rtctl/node',
      './usr/lib/rtctl/app/dist/bin/rtctl.js',
      './usr/lib/rtctl/app/dist/native/rtctl-fanotify',
      './usr/lib/rtctl/app/dist/native/bpf/rtctl-bpf-loader',
      `.${PACKAGED_UNIT_PATH}`,
      './etc/rtctl/enforcer.yaml',
      './usr/share/doc/rtctl/copyright',
      './usr/share/doc/rtctl/changelog.gz',
    ]) {
      assert.ok(
        contents.split('\n').some((l) => l.endsWith(` ${path}`)),
        `${path} in the package`,
      );
    }
    assert.ok(
      !/ \.\/usr\/lib\/rtctl\/app\/node_modules\/(typescript|mocha|eslint)\//.test(contents),
      'no dev dependencies',
    );
    assert.equal(execFileSync('dpkg-deb', ['-f', deb, 'Package'], { encoding: 'utf8' }).trim(), 'rtctl');
    assert.equal(execFileSync('dpkg-deb', ['-f', deb, 'Architecture'], { encoding: 'utf8' }).trim(), 'amd64');
    const info = execFileSync('dpkg-deb', ['-I', deb], { encoding: 'utf8' });
    for (const script of ['postinst', 'prerm', 'postrm', 'conffiles', 'md5sums'])
      assert.match(info, new RegExp(` ${script} `));
    assert.equal(
      execFileSync('dpkg-deb', ['--info', deb, 'conffiles'], { encoding: 'utf8' }).trim(),
      '/etc/rtctl/enforcer.yaml',
    );
  });

  it('installs into a fresh bookworm root file system, works there, removes and purges leaving nothing behind', () => {
    copyFileSync(deb, join(root, 'tmp', 'rtctl.deb'));
    const before = listFiles(root);

    const install = chroot(root, ['dpkg', '-i', '/tmp/rtctl.deb']);
    assert.equal(install.status, 0, install.out);
    assert.match(install.out, /systemd is not running: rtctl-enforcer\.service is installed but not started/);
    assert.equal(
      readFileSync(join(root, PACKAGED_UNIT_PATH.slice(1)), 'utf8'),
      renderEnforcerUnit({ command: [PACKAGED_RTCTL] }),
    );
    assert.equal(readFileSync(join(root, 'etc/rtctl/enforcer.yaml'), 'utf8'), DEFAULT_ENFORCER_CONFIG);
    assert.ok(existsSync(join(root, 'etc/rtctl/policies')));
    assert.equal(
      readlinkSync(join(root, 'etc/systemd/system/multi-user.target.wants/rtctl-enforcer.service')),
      PACKAGED_UNIT_PATH,
      'enabled for when systemd runs (deb-systemd-helper)',
    );

    // The installed rtctl runs with its own Node (bookworm's would be 18).
    const version = chroot(root, ['rtctl', '--version']);
    assert.equal(version.status, 0, version.out);
    assert.equal(version.out.trim(), '0.1.0');
    // systemd-analyze verify on the installed unit (the root file system has no systemd of its own: the host's
    // verifies it, with ExecStart's program looked up in the root file system, where it was installed).
    const installedUnit = readFileSync(join(root, PACKAGED_UNIT_PATH.slice(1)), 'utf8');
    const verifyDir = mkdtempSync(join(tmpdir(), 'rtctl-verify-'));
    try {
      writeFileSync(
        join(verifyDir, 'rtctl-enforcer.service'),
        installedUnit.replace(`ExecStart=${PACKAGED_RTCTL} `, `ExecStart=${root}${PACKAGED_RTCTL} `),
      );
      const verify = spawnSync('systemd-analyze', ['verify', join(verifyDir, 'rtctl-enforcer.service')], {
        encoding: 'utf8',
        timeout: 60000,
      });
      assert.equal(verify.status, 0, `${verify.stdout}${verify.stderr}`);
      assert.equal(`${verify.stdout}${verify.stderr}`.trim(), '');
    } finally {
      rmSync(verifyDir, { recursive: true, force: true });
    }

    // `rtctl install --systemd` and `rtctl uninstall --systemd` of the installed rtctl, in the chroot.
    const i = chroot(root, ['rtctl', 'install', '--systemd']);
    assert.equal(i.status, 0, i.out);
    assert.equal(
      readFileSync(join(root, 'etc/systemd/system/rtctl-enforcer.service'), 'utf8'),
      renderEnforcerUnit({ command: [PACKAGED_RTCTL] }),
    );
    assert.match(i.out, /kept \/etc\/rtctl\/enforcer\.yaml/);
    const u = chroot(root, ['rtctl', 'uninstall', '--systemd']);
    assert.equal(u.status, 0, u.out);
    assert.match(u.out, /removed \/etc\/systemd\/system\/rtctl-enforcer\.service/);
    assert.match(u.out, /nothing to release/);

    const remove = chroot(root, ['dpkg', '-r', 'rtctl']);
    assert.equal(remove.status, 0, remove.out);
    const added = listFiles(root).filter((p) => !before.includes(p));
    assert.deepEqual(added, [
      'etc/rtctl',
      'etc/rtctl/enforcer.yaml',
      'etc/rtctl/policies',
      'etc/systemd/system/multi-user.target.wants/rtctl-enforcer.service',
      'etc/systemd/system/rtctl-enforcer.service',
      'var/lib/dpkg/info/rtctl.list',
      'var/lib/dpkg/info/rtctl.postrm',
      'var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/rtctl-enforcer.service',
      'var/lib/systemd/deb-systemd-helper-enabled/rtctl-enforcer.service.dsh-also',
      'var/lib/systemd/deb-systemd-helper-masked',
      'var/lib/systemd/deb-systemd-helper-masked/rtctl-enforcer.service',
    ]);
    assert.ok(!existsSync(join(root, 'usr/bin/rtctl')));
    assert.ok(!existsSync(join(root, 'usr/lib/rtctl')));

    const purge = chroot(root, ['dpkg', '-P', 'rtctl']);
    assert.equal(purge.status, 0, purge.out);
    const after = listFiles(root);
    assert.deepEqual(
      after.filter((p) => !before.includes(p)),
      [],
      'nothing left after purge',
    );
    assert.deepEqual(
      before.filter((p) => !after.includes(p)),
      [],
      'nothing of the system removed',
    );
  });

  it('lintian reports no errors (warnings listed)', function () {
    const r = spawnSync('lintian', ['--allow-root', '--tag-display-limit', '0', deb], {
      encoding: 'utf8',
      timeout: 1200000,
      maxBuffer: 64 << 20,
    });
    const lines = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /^[EWO]: /.test(l));
    const errors = lines.filter((l) => l.startsWith('E: '));
    const warnings = lines.filter((l) => l.startsWith('W: '));
    process.stdout.write(`      lintian: ${errors.length} errors, ${warnings.length} warnings\n`);
    for (const w of warnings) process.stdout.write(`        ${w}\n`);
    assert.deepEqual(errors, []);
    assert.notEqual(r.status, null, 'lintian ran to the end');
  });
});
