// The enforcer's systemd unit: its text (deterministic, the hardening and ordering the issue asks for),
// `systemd-analyze verify` (Debian's systemd) on it, the ExecStart parser the real-kernel test starts the
// enforcer with, and `rtctl install/uninstall --systemd` into a temporary root (systemd does not run here:
// the "systemd runs" branch is exercised with a recording stand-in for systemctl, named as such).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnforcerConfigText } from '../../../enforcer/config-file.js';
import { DEFAULT_ENFORCER_CONFIG } from '../../../install/systemd/default-config.js';
import {
  ENFORCER_CAPABILITIES,
  ENFORCER_UNIT_PATH,
  UNIT_CONFIG_PATH,
  parseExecStart,
  readUnitEnvironment,
  readUnitSetting,
  renderEnforcerUnit,
} from '../../../install/systemd/enforcer-unit.js';
import {
  installSystemd,
  uninstallSystemd,
  type SystemdHost,
} from '../../../install/systemd/systemd-install.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import { REPO_ROOT, rtctlArgs } from '../../enforcer/support/enforcer-process.js';

const NODE_COMMAND = [process.execPath, join(REPO_ROOT, 'bin/rtctl.ts')];

function verify(unitText: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rtctl-unit-'));
  try {
    const file = join(dir, 'rtctl-enforcer.service');
    writeFileSync(file, unitText);
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', timeout: 60000 });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('rtctl-enforcer.service', () => {
  const unit = renderEnforcerUnit({ command: ['/usr/bin/rtctl'] });

  it('is deterministic and runs `rtctl enforcer run --config /etc/rtctl/enforcer.yaml`', () => {
    assert.equal(renderEnforcerUnit({ command: ['/usr/bin/rtctl'] }), unit);
    assert.deepEqual(parseExecStart(unit), [
      '/usr/bin/rtctl',
      'enforcer',
      'run',
      '--config',
      '/etc/rtctl/enforcer.yaml',
    ]);
    const spaced = renderEnforcerUnit({
      command: ['/opt/my tools/node', '/opt/x.js'],
      config: '/etc/a b.yaml',
    });
    assert.deepEqual(parseExecStart(spaced), [
      '/opt/my tools/node',
      '/opt/x.js',
      'enforcer',
      'run',
      '--config',
      '/etc/a b.yaml',
    ]);
  });

  it('restarts on failure, starts after containerd without requiring it, and is hardened', () => {
    assert.equal(readUnitSetting(unit, 'Restart'), 'on-failure');
    assert.equal(readUnitSetting(unit, 'Wants'), 'containerd.service');
    assert.match(readUnitSetting(unit, 'After') ?? '', /(^| )containerd\.service( |$)/);
    assert.equal(readUnitSetting(unit, 'Requires'), undefined);
    assert.equal(readUnitSetting(unit, 'BindsTo'), undefined);
    assert.equal(readUnitSetting(unit, 'ProtectSystem'), 'strict');
    assert.equal(readUnitSetting(unit, 'ReadWritePaths'), '-/sys/fs/bpf');
    assert.equal(readUnitSetting(unit, 'RuntimeDirectory'), 'rtctl');
    assert.equal(readUnitSetting(unit, 'RuntimeDirectoryPreserve'), 'yes');
    assert.equal(readUnitSetting(unit, 'LogsDirectory'), 'rtctl');
    assert.equal(readUnitSetting(unit, 'ProtectHome'), 'read-only');
    assert.equal(readUnitSetting(unit, 'PrivateTmp'), 'yes');
    assert.equal(readUnitSetting(unit, 'NoNewPrivileges'), 'yes');
    assert.equal(readUnitSetting(unit, 'KillMode'), 'process', 'a restart leaves the helper enforcing');
    assert.deepEqual(readUnitSetting(unit, 'CapabilityBoundingSet')?.split(' '), [...ENFORCER_CAPABILITIES]);
    // The cgroup network plane is on (pins on the bpffs, host policies on the cgroup v2 root), and so is the
    // system call plane.
    assert.deepEqual(readUnitEnvironment(unit), [
      'RTCTL_NETWORK_PIN_DIR=/sys/fs/bpf/rtctl-net',
      'RTCTL_NETWORK_HOST_CGROUP=/sys/fs/cgroup',
      'RTCTL_SYSCALL_PIN_DIR=/sys/fs/bpf/rtctl-sys',
    ]);
  });

  it('passes `systemd-analyze verify` (and a broken unit does not)', function () {
    this.timeout(60000);
    requirePrereqs(this, [[hasCommand('systemd-analyze'), 'systemd-analyze (apt-get install systemd)']]);
    // verify checks that ExecStart's program exists: the unit as rendered for this checkout's rtctl.
    const ok = verify(renderEnforcerUnit({ command: NODE_COMMAND }));
    assert.equal(ok.status, 0, ok.output);
    assert.equal(ok.output.trim(), '', 'no warnings either');
    const broken = verify(
      renderEnforcerUnit({ command: NODE_COMMAND }).replace('Restart=on-failure', 'Restart=sometimes'),
    );
    assert.notEqual(broken.output.trim(), '', 'verify reports a bad setting');
    const missing = verify(renderEnforcerUnit({ command: ['/nonexistent/rtctl'] }));
    assert.notEqual(missing.status, 0);
    assert.match(missing.output, /is not executable/);
  });

  it('ships a default configuration that the enforcer accepts (audit mode on the host)', () => {
    const flags = parseEnforcerConfigText(UNIT_CONFIG_PATH, DEFAULT_ENFORCER_CONFIG);
    assert.equal(flags.policyDir, '/etc/rtctl/policies');
    assert.equal(flags.hostPosture, 'audit');
    assert.equal(flags.listen, 'unix:/run/rtctl/alerts.sock');
    assert.equal(flags.alertLog, '/var/log/rtctl/alerts.jsonl');
  });
});

describe('rtctl install/uninstall --systemd (temporary root)', () => {
  let root = '';
  let said: string[] = [];
  let calls: string[][] = [];
  let released = 0;
  const host = (systemd: boolean): SystemdHost => ({
    root,
    systemdRunning: () => systemd,
    // A recording stand-in for systemctl: systemd is not PID 1 on this machine.
    systemctl: (args) => void calls.push([...args]),
    release: () => {
      released++;
      return Promise.resolve();
    },
    say: (line) => void said.push(line),
  });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rtctl-root-'));
    said = [];
    calls = [];
    released = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('without systemd: writes the unit, the default configuration and the policy folder, and says it is not enabled', () => {
    installSystemd(host(false), ['/usr/bin/rtctl']);
    assert.equal(
      readFileSync(join(root, ENFORCER_UNIT_PATH), 'utf8'),
      renderEnforcerUnit({ command: ['/usr/bin/rtctl'] }),
    );
    assert.equal(readFileSync(join(root, UNIT_CONFIG_PATH), 'utf8'), DEFAULT_ENFORCER_CONFIG);
    assert.ok(existsSync(join(root, 'etc/rtctl/policies')));
    assert.deepEqual(calls, []);
    assert.match(said.join('\n'), /systemd is not running here: .* written but not enabled/);
  });

  it('keeps an existing configuration', () => {
    mkdirSync(join(root, 'etc/rtctl'), { recursive: true });
    writeFileSync(join(root, UNIT_CONFIG_PATH), 'mine\n');
    installSystemd(host(false), ['/usr/bin/rtctl']);
    assert.equal(readFileSync(join(root, UNIT_CONFIG_PATH), 'utf8'), 'mine\n');
    assert.match(said.join('\n'), /kept \/etc\/rtctl\/enforcer\.yaml/);
  });

  it('with systemd (stand-in systemctl): reloads, enables and starts; uninstall disables, removes and releases', async () => {
    installSystemd(host(true), ['/usr/bin/rtctl']);
    assert.deepEqual(calls, [['daemon-reload'], ['enable', '--now', 'rtctl-enforcer.service']]);
    calls = [];
    await uninstallSystemd(host(true));
    assert.deepEqual(calls, [['disable', '--now', 'rtctl-enforcer.service'], ['daemon-reload']]);
    assert.equal(existsSync(join(root, ENFORCER_UNIT_PATH)), false);
    assert.equal(released, 1, 'enforcement released');
    assert.ok(existsSync(join(root, UNIT_CONFIG_PATH)), 'the configuration stays');
  });

  it('uninstall without systemd still removes the unit and releases enforcement', async () => {
    installSystemd(host(false), ['/usr/bin/rtctl']);
    await uninstallSystemd(host(false));
    assert.equal(existsSync(join(root, ENFORCER_UNIT_PATH)), false);
    assert.equal(released, 1);
  });

  it('`rtctl uninstall` without --systemd is the cluster uninstall: with no cluster it exits 2 and touches no unit', function () {
    this.timeout(60000);
    const r = spawnSync(process.execPath, rtctlArgs(['uninstall', '--timeout', '5s']), {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60000,
      env: { ...process.env, KUBECONFIG: join(REPO_ROOT, 'no-such-kubeconfig') },
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^rtctl: /m);
    assert.doesNotMatch(r.stderr, /systemd/);
  });
});
