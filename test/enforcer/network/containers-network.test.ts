// The cgroup network plane on real containers (containerd + runc, the test harness's private containerd):
// each container runs in its own network namespace (ctr's default: only `lo`, so nothing leaves it), and the
// plane attaches to the container's cgroup, which the test's containerd created. With the shipped imds-guard
// policy, busybox nc in the unlabelled container fails with EPERM; in the labelled one they get past
// the hook (the namespace has no route: "Network is unreachable"). Decisions are reported as Block events.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintTexts } from '../../../compiler/lint.js';
import { resolvePostures } from '../../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable } from '../../../compiler/rule-table/read-rule-table.js';
import type { DataPlaneEvent, WorkloadEnforcement } from '../../../enforcer/data-plane.js';
import { NetworkPlane, findCgroup2Mount, readCgroup2Path } from '../../../enforcer/network/network-plane.js';
import { requirePrereqs } from '../../support/prereq.js';
import {
  containerdPrereqs,
  startContainerd,
  type Containerd,
  type TestContainer,
} from '../support/containerd.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const OBJECT = join(ROOT, 'dist/native/network/rtctl-net.bpf.o');
const GUARD = join(ROOT, 'policies/hardening/imds/imds-guard.yaml');

describe('cgroup network plane on containers (containerd + runc, own network namespaces)', function () {
  this.timeout(180_000);
  let cd: Containerd | undefined;
  let work = '';
  let bpffs = '';
  let plane: NetworkPlane | undefined;
  const containers: TestContainer[] = [];
  const events: DataPlaneEvent[] = [];

  before(async function () {
    let cgroup2 = '';
    try {
      cgroup2 = findCgroup2Mount();
    } catch {
      // reported below
    }
    requirePrereqs(this, [
      ...containerdPrereqs(),
      [cgroup2 !== '', 'a cgroup v2 mount'],
      [existsSync(LOADER) && existsSync(OBJECT), 'the network plane built (npm run build:native)'],
    ]);
    cd = await startContainerd();
    containers.push(
      await cd.runContainer({
        id: `net-plain-${process.pid}`,
        pod: 'web',
        namespace: 'team-a',
        container: 'c',
        labels: { app: 'web' },
      }),
      await cd.runContainer({
        id: `net-labelled-${process.pid}`,
        pod: 'agent',
        namespace: 'team-a',
        container: 'c',
        labels: { app: 'agent', 'security.runtime.com/imds-access': 'allowed' },
      }),
    );
    work = mkdtempSync(join(tmpdir(), 'rtctl-netc-'));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, 'net'),
      stateDir: work,
      cgroupRoot: cgroup2,
    });
    await plane.start();
    void (async () => {
      for await (const e of plane.events()) events.push(e);
    })();
    const guard = readFileSync(GUARD, 'utf8').replace(
      'name: imds-guard',
      'name: imds-guard\n  namespace: team-a',
    );
    const { ruleSet } = lintTexts([{ file: 'imds-guard.yaml', text: guard }]);
    const image = buildRuleTableImage(ruleSet);
    const read = readRuleTable(image.bytes);
    assert.ok(read.ok);
    const workloads = containers.map((c): WorkloadEnforcement => {
      const set = read.table.selectPolicies({
        kind: 'container',
        namespace: c.namespace,
        labels: c.labels,
        nodeLabels: {},
      });
      return {
        // The container's cgroup as runc made it (cgroup v2 line of /proc/<pid>/cgroup).
        anchor: { key: c.id, host: false, pid: c.pid, cgroupPath: readCgroup2Path(c.pid) },
        policies: image.records.policies
          .map((_, i) => i)
          .filter((i) => ((set.bits[i >>> 3] ?? 0) >> (i & 7)) & 1),
        postures: resolvePostures({}),
      };
    });
    await plane.apply({ generation: 1, table: image, workloads });
  });

  after(async () => {
    await plane?.stop({ keepEnforcing: false }).catch(() => undefined);
    await cd?.stop();
    if (bpffs !== '') execFileSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('nc to the metadata service fails with EPERM in the unlabelled container, with a Block event', async () => {
    const id = containers[0]?.id ?? '';
    // nc here; wget too in containers-imds.test.ts (without `-T`: Debian's busybox-static 1.35 has no wget
    // timeout yet parses `-T` into a null pointer and dies with SIGSEGV).
    const nc = await cd?.exec(id, ['/bin/busybox', 'nc', '-w', '2', '169.254.169.254', '80']);
    assert.notEqual(nc?.code, 0);
    assert.match(`${nc?.stderr ?? ''}${nc?.stdout ?? ''}`, /Operation not permitted/, JSON.stringify(nc));
    const deadline = Date.now() + 10_000;
    while (events.filter((e) => e.workload === id).length < 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const mine = events.filter((e) => e.workload === id);
    assert.equal(mine.length, 1, JSON.stringify(events.map((e) => [e.workload, e.resource, e.processName])));
    for (const e of mine) {
      assert.equal(e.action, 'Block');
      assert.equal(e.policyName, 'imds-guard');
      assert.equal(e.resource, '169.254.169.254:80');
      assert.match(e.processName, /busybox|wget|nc/);
    }
  });

  it('the labelled container gets past the hook (no route in its namespace, not EPERM)', async () => {
    const id = containers[1]?.id ?? '';
    const nc = await cd?.exec(id, ['/bin/busybox', 'nc', '-w', '2', '169.254.169.254', '80']);
    assert.notEqual(nc?.code, 0);
    const text = `${nc?.stderr ?? ''}${nc?.stdout ?? ''}`;
    assert.doesNotMatch(text, /Operation not permitted/);
    assert.match(text, /unreachable/i, JSON.stringify(nc));
    assert.equal(events.filter((e) => e.workload === id).length, 0);
  });
});
