// The cgroup network data plane deciding by the acting process (real kernel, root): rules with fromSource
// (paths, directories, recursive directories) and pts, on protocol and address rules. Workers are the same
// net-worker.py run by copies of the Python interpreter at different paths (each copy is another executable as
// the kernel sees it: task->mm->exe_file), one with a controlling terminal of its own; all in one cgroup and
// network namespace the test creates (only `lo`, down: an allowed connect fails with ENETUNREACH after the hook,
// a denied one with EPERM from it). Ends with a differential test against the oracle on generated rule sets with
// sources and pts (fast-check, fixed seed).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { OperationRequest, Workload } from '../../../compiler/decide/decision-input.js';
import type { RuleSet, SourceMatcher } from '../../../compiler/ir/rule-set.js';
import { resolvePostures } from '../../../compiler/model/posture.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { readRuleTable } from '../../../compiler/rule-table/read-rule-table.js';
import type { DataPlaneEvent, EnforcementState } from '../../../enforcer/data-plane.js';
import { NetworkPlane, findCgroup2Mount } from '../../../enforcer/network/network-plane.js';
import {
  NetLimitError,
  classOfPath,
  encodeNetWorkload,
  representativePaths,
  type NetSource,
} from '../../../enforcer/network/encode-net-state.js';
import { Worker, getWorkerSocketNames, type WorkerSocketKind } from './net-worker.js';
import {
  Action,
  Operation,
  address,
  makePodPolicy,
  protocol,
  srcDir,
  srcPath,
} from '../../compiler/decide/rule-set-builder.js';
import { hasCommand, isRoot, requirePrereqs } from '../../support/prereq.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const LOADER = join(ROOT, 'dist/native/network/rtctl-net-loader');
const OBJECT = join(ROOT, 'dist/native/network/rtctl-net.bpf.o');
const EPERM = 1;
const ENETUNREACH = 101;

const pod: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };

function cgroup2(): string | undefined {
  try {
    return findCgroup2Mount();
  } catch {
    return undefined;
  }
}

describe('network source classes: the control plane names one executable of each class', () => {
  const sources: NetSource[] = [
    { dir: false, value: '/usr/bin/curl', recursive: false },
    { dir: true, value: '/usr/bin/', recursive: false },
    { dir: true, value: '/usr/', recursive: true },
    { dir: true, value: '/opt/', recursive: false },
  ];

  it('gives each path the source bits the oracle would match (path, directory, recursive directory)', () => {
    assert.equal(classOfPath(sources, '/usr/bin/curl'), 0b0111);
    assert.equal(classOfPath(sources, '/usr/bin/wget'), 0b0110);
    assert.equal(classOfPath(sources, '/usr/local/bin/x'), 0b0100);
    assert.equal(classOfPath(sources, '/opt/x'), 0b1000);
    assert.equal(classOfPath(sources, '/opt/sub/x'), 0);
    assert.equal(classOfPath(sources, '/usr'), 0, 'the directory itself is not in it');
  });

  it('covers every class an absolute path can have (generated paths, fast-check, fixed seed)', () => {
    const seg = fc.constantFrom('usr', 'bin', 'opt', 'curl', 'x', 'rtctl-other');
    const arbPath = fc.array(seg, { minLength: 1, maxLength: 5 }).map((p) => `/${p.join('/')}`);
    const arbSource = fc.oneof(
      arbPath.map((value): NetSource => ({ dir: false, value, recursive: false })),
      fc
        .tuple(arbPath, fc.boolean())
        .map(([value, recursive]): NetSource => ({ dir: true, value: `${value}/`, recursive })),
      fc.constant<NetSource>({ dir: true, value: '/', recursive: true }),
    );
    fc.assert(
      fc.property(fc.array(arbSource, { minLength: 1, maxLength: 6 }), fc.array(arbPath), (srcs, paths) => {
        const covered = new Set(representativePaths(srcs).map((p) => classOfPath(srcs, p)));
        for (const p of paths)
          assert.ok(covered.has(classOfPath(srcs, p)), `${p} in ${JSON.stringify(srcs)}`);
      }),
    );
  });
});

describe('network sources: limits of the maps are refused, never truncated', () => {
  const encode = (sources: SourceMatcher[]): unknown => {
    const image = buildRuleTableImage({
      policies: [
        makePodPolicy('many', [{ matcher: protocol('tcp'), action: Action.Block, fromSource: sources }]),
      ],
    });
    const read = readRuleTable(image.bytes);
    assert.ok(read.ok);
    return encodeNetWorkload(
      read.table,
      image.records,
      {
        anchor: { key: 'w', host: false, pid: 1, cgroupPath: '/w' },
        policies: [0],
        postures: resolvePostures({}),
      },
      0,
    );
  };

  it('31 sources fit, 32 are refused with NETWORK_LIMIT', () => {
    const paths = (n: number): SourceMatcher[] =>
      Array.from({ length: n }, (_, i) => srcPath(`/bin/tool${i}`));
    assert.doesNotThrow(() => encode(paths(31)));
    assert.throws(
      () => encode(paths(32)),
      (e: unknown) => e instanceof NetLimitError && /31 sources/.test(e.message),
    );
  });

  it('a source path of 255 bytes fits, one of 256 is refused with NETWORK_LIMIT', () => {
    const long = (n: number): string => `/${'x'.repeat(n - 1)}`;
    assert.doesNotThrow(() => encode([srcPath(long(255))]));
    assert.throws(
      () => encode([srcPath(long(256))]),
      (e: unknown) => e instanceof NetLimitError,
    );
  });

  it('a workload without sources or pts keeps the fast path: no flags, class 0 only, no rtn_src entries', () => {
    const image = buildRuleTableImage({
      policies: [makePodPolicy('plain', [{ matcher: protocol('tcp'), action: Action.Block }])],
    });
    const read = readRuleTable(image.bytes);
    assert.ok(read.ok);
    const e = encodeNetWorkload(
      read.table,
      image.records,
      {
        anchor: { key: 'w', host: false, pid: 1, cgroupPath: '/w' },
        policies: [0],
        postures: resolvePostures({}),
      },
      0,
    );
    assert.equal(e.flags, 0);
    assert.ok(e.entries.every(([map]) => map !== 'rtn_src'));
    assert.ok(e.entries.filter(([map]) => map === 'rtn_proto').every(([, key]) => key.endsWith('00000000')));
  });
});

describe('cgroup network data plane: fromSource and pts (real kernel, test-created cgroup, copies of the interpreter)', function () {
  this.timeout(180_000);
  let work = '';
  let bpffs = '';
  let cgRoot = '';
  let cgTest = '';
  let cgWorkload = '';
  let plane: NetworkPlane | undefined;
  const events: DataPlaneEvent[] = [];
  /** Interpreter copies, by name. */
  const exe: Record<'a' | 'b' | 'tools' | 'deep', string> = { a: '', b: '', tools: '', deep: '' };
  const workers: Record<'a' | 'b' | 'tools' | 'deep' | 'aTty', Worker | undefined> = {
    a: undefined,
    b: undefined,
    tools: undefined,
    deep: undefined,
    aTty: undefined,
  };

  before(async function () {
    requirePrereqs(this, [
      [isRoot(), 'root (BPF programs and cgroups)'],
      [cgroup2() !== undefined, 'a cgroup v2 mount'],
      [existsSync(LOADER) && existsSync(OBJECT), 'the network plane built (npm run build:native)'],
      [hasCommand('unshare') && hasCommand('python3'), 'unshare (util-linux) and python3'],
    ]);
    work = realpathSync(mkdtempSync(join(tmpdir(), 'rtctl-netsrc-')));
    bpffs = join(work, 'bpffs');
    mkdirSync(bpffs);
    execFileSync('mount', ['-t', 'bpf', 'bpf', bpffs]);
    cgRoot = cgroup2() ?? '';
    cgTest = join(cgRoot, `rtctl-test-netsrc-${process.pid}`);
    cgWorkload = join(cgTest, 'workload');
    mkdirSync(cgWorkload, { recursive: true });
    const python = execFileSync(
      'python3',
      ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'],
      { encoding: 'utf8' },
    ).trim();
    exe.a = join(work, 'bin', 'a', 'python3');
    exe.b = join(work, 'bin', 'b', 'python3');
    exe.tools = join(work, 'tools', 'python3');
    exe.deep = join(work, 'tools', 'sub', 'python3');
    for (const p of Object.values(exe)) {
      mkdirSync(join(p, '..'), { recursive: true });
      copyFileSync(python, p);
      chmodSync(p, 0o755);
    }
    plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, 'net'),
      stateDir: work,
      cgroupRoot: cgRoot,
    });
    await plane.start();
    void (async () => {
      for await (const e of plane.events()) events.push(e);
    })();
    // One at a time: a worker's first line is read by ready(), which must wait for it before it comes.
    const start = async (python: string, tty = false): Promise<Worker> => {
      const w = new Worker(cgWorkload, undefined, { python, tty });
      await w.ready();
      return w;
    };
    workers.a = await start(exe.a);
    workers.b = await start(exe.b);
    workers.tools = await start(exe.tools);
    workers.deep = await start(exe.deep);
    workers.aTty = await start(exe.a, true);
  });

  after(async () => {
    for (const w of Object.values(workers)) await w?.stop();
    await plane?.stop({ keepEnforcing: false }).catch(() => undefined);
    for (const dir of [cgWorkload, cgTest]) if (dir !== '' && existsSync(dir)) rmdirSync(dir);
    if (bpffs !== '') execFileSync('umount', [bpffs]);
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  let generation = 0;
  async function applyRules(ruleSet: RuleSet, postures: { network?: 'audit' | 'block' } = {}): Promise<void> {
    const image = buildRuleTableImage(ruleSet);
    const read = readRuleTable(image.bytes);
    assert.ok(read.ok);
    const set = read.table.selectPolicies(pod);
    const policies = image.records.policies
      .map((_, i) => i)
      .filter((i) => ((set.bits[i >>> 3] ?? 0) >> (i & 7)) & 1);
    const state: EnforcementState = {
      generation: ++generation,
      table: image,
      workloads: [
        {
          anchor: {
            key: 'pod',
            host: false,
            pid: workers.a?.pid ?? 0,
            cgroupPath: cgWorkload.slice(cgRoot.length),
          },
          policies,
          postures: resolvePostures(postures),
        },
      ],
    };
    await plane?.apply(state);
  }

  async function waitForEvents(n: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (events.length < n) {
      if (Date.now() > deadline) assert.fail(`expected ${n} events, got ${events.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const sock = (
    w: Worker | undefined,
    kind: WorkerSocketKind,
  ): Promise<{ socket: number; send: number | null }> => {
    assert.ok(w);
    return w.run({ kind });
  };
  const connect = (
    w: Worker | undefined,
    addr: string,
    port = 80,
  ): Promise<{ socket: number; send: number | null }> => {
    assert.ok(w);
    return w.run({ kind: 'tcp', op: 'connect', address: addr, port });
  };

  it('sees the acting process here (the kernel lets cgroup programs call bpf_get_current_task_btf)', () => {
    assert.equal(plane?.processAware, true);
    assert.equal(plane?.unavailableProcessForm('network.fromSource'), undefined);
    assert.equal(plane?.unavailableProcessForm('network.pts'), undefined);
  });

  it('Block matchProtocols tcp fromSource a path denies only that executable, with its path as ProcessName', async () => {
    await applyRules({
      policies: [
        makePodPolicy('no-tcp-a', [
          { matcher: protocol('tcp'), action: Action.Block, fromSource: [srcPath(exe.a)], severity: 6 },
        ]),
      ],
    });
    assert.deepEqual(await plane?.query(cgWorkload), [1, 1, 1, 1, 1]);
    events.length = 0;
    assert.deepEqual(await sock(workers.a, 'tcp'), { socket: EPERM, send: null });
    assert.deepEqual(await sock(workers.a, 'udp'), { socket: 0, send: null });
    assert.deepEqual(await sock(workers.b, 'tcp'), { socket: 0, send: null });
    assert.deepEqual(await sock(workers.tools, 'tcp'), { socket: 0, send: null });
    await waitForEvents(1);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.action, 'Block');
    assert.equal(events[0]?.policyName, 'no-tcp-a');
    assert.equal(events[0]?.processName, exe.a);
    assert.equal(events[0]?.resource, 'protocol=tcp');
  });

  it('Block fromSource a directory: directly in it only, and at any depth with recursive', async () => {
    await applyRules({
      policies: [
        makePodPolicy('no-udp-tools', [
          { matcher: protocol('udp'), action: Action.Block, fromSource: [srcDir(`${work}/tools/`)] },
        ]),
      ],
    });
    assert.deepEqual(await sock(workers.tools, 'udp'), { socket: EPERM, send: null });
    assert.deepEqual(await sock(workers.deep, 'udp'), { socket: 0, send: null }, 'one level down: not in it');
    assert.deepEqual(await sock(workers.a, 'udp'), { socket: 0, send: null });
    await applyRules({
      policies: [
        makePodPolicy('no-udp-tools', [
          { matcher: protocol('udp'), action: Action.Block, fromSource: [srcDir(`${work}/tools/`, true)] },
        ]),
      ],
    });
    assert.deepEqual(await sock(workers.tools, 'udp'), { socket: EPERM, send: null });
    assert.deepEqual(await sock(workers.deep, 'udp'), { socket: EPERM, send: null });
    assert.deepEqual(await sock(workers.b, 'udp'), { socket: 0, send: null });
  });

  it('Block matchAddresses fromSource: the connect of that executable is denied, another gets past the hook', async () => {
    await applyRules({
      policies: [
        makePodPolicy('imds-a', [
          {
            matcher: address('169.254.169.254/32', [80]),
            action: Action.Block,
            fromSource: [srcPath(exe.a)],
          },
        ]),
      ],
    });
    events.length = 0;
    assert.deepEqual(await connect(workers.a, '169.254.169.254'), { socket: 0, send: EPERM });
    assert.deepEqual(await connect(workers.b, '169.254.169.254'), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await connect(workers.a, '169.254.169.254', 81), { socket: 0, send: ENETUNREACH });
    await waitForEvents(1);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.resource, '169.254.169.254:80');
    assert.equal(events[0]?.processName, exe.a);
  });

  it('Allow fromSource with runtime-network-posture block: only the listed executable is least-permissive', async () => {
    await applyRules(
      {
        policies: [
          makePodPolicy('a-tcp-ten', [
            { matcher: protocol('tcp'), action: Action.Allow, fromSource: [srcPath(exe.a)] },
            { matcher: address('10.0.0.0/8'), action: Action.Allow, fromSource: [srcPath(exe.a)] },
          ]),
        ],
      },
      { network: 'block' },
    );
    events.length = 0;
    // a: tcp allowed by its rule; udp falls to the posture (a is least-permissive).
    assert.deepEqual(await sock(workers.a, 'tcp'), { socket: 0, send: null });
    assert.deepEqual(await sock(workers.a, 'udp'), { socket: EPERM, send: null });
    // b: no rule names it, it is not least-permissive: everything passes without an alert.
    assert.deepEqual(await sock(workers.b, 'udp'), { socket: 0, send: null });
    assert.deepEqual(await connect(workers.b, '192.0.2.1'), { socket: 0, send: ENETUNREACH });
    await waitForEvents(1);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.policyName, 'DefaultPosture');
    assert.equal(events[0]?.processName, exe.a);
  });

  it('Audit fromSource reports and lets the operation proceed', async () => {
    await applyRules({
      policies: [
        makePodPolicy('audit-b', [
          {
            matcher: address('10.0.0.0/8'),
            action: Action.Audit,
            fromSource: [srcDir(`${work}/bin/`, true)],
          },
        ]),
      ],
    });
    events.length = 0;
    const before = (await plane?.stats())?.reported ?? 0;
    assert.deepEqual(await connect(workers.b, '10.1.2.3'), { socket: 0, send: ENETUNREACH });
    assert.deepEqual(await connect(workers.tools, '10.1.2.3'), { socket: 0, send: ENETUNREACH });
    // The kernel counts a reported event before the call returns: one, b's.
    assert.equal(((await plane?.stats())?.reported ?? 0) - before, 1);
    await waitForEvents(1);
    assert.deepEqual(
      events.map((e) => [e.action, e.processName]),
      [['Audit', exe.b]],
    );
  });

  it('pts: a rule with pts matches only a process with a controlling terminal (protocol and address rules)', async () => {
    await applyRules({
      policies: [
        makePodPolicy('tty-only', [
          { matcher: protocol('udp'), action: Action.Block, pts: true },
          { matcher: address('169.254.169.254/32'), action: Action.Block, pts: true },
        ]),
      ],
    });
    assert.deepEqual(await sock(workers.aTty, 'udp'), { socket: EPERM, send: null });
    assert.deepEqual(await sock(workers.a, 'udp'), { socket: 0, send: null });
    assert.deepEqual(await connect(workers.aTty, '169.254.169.254'), { socket: 0, send: EPERM });
    assert.deepEqual(await connect(workers.a, '169.254.169.254'), { socket: 0, send: ENETUNREACH });
  });

  it('decides by path, as the oracle: a running executable renamed into a source directory is decided by its new name', async () => {
    await applyRules({
      policies: [
        makePodPolicy('no-udp-tools', [
          { matcher: protocol('udp'), action: Action.Block, fromSource: [srcDir(`${work}/tools/`)] },
        ]),
      ],
    });
    assert.deepEqual(await sock(workers.b, 'udp'), { socket: 0, send: null });
    const moved = join(work, 'tools', 'python3-moved');
    renameSync(exe.b, moved);
    try {
      assert.equal(readlinkSync(`/proc/${workers.b?.pid ?? 0}/exe`), moved);
      assert.deepEqual(await sock(workers.b, 'udp'), { socket: EPERM, send: null });
    } finally {
      renameSync(moved, exe.b);
    }
    assert.deepEqual(await sock(workers.b, 'udp'), { socket: 0, send: null });
  });

  it('where the kernel refuses the task helper (programs as loaded before 6.10), the plane says fromSource and pts are not enforced, and they never match', async () => {
    await plane?.stop({ keepEnforcing: false });
    // The loader loads the programs without the helper calls, as on a kernel that refuses them.
    process.env['RTCTL_NET_PIDNS_CHECK'] = '0';
    try {
      plane = new NetworkPlane({
        loaderPath: LOADER,
        objectPath: OBJECT,
        pinDir: join(bpffs, 'net'),
        stateDir: work,
        cgroupRoot: cgRoot,
      });
      await plane.start();
    } finally {
      delete process.env['RTCTL_NET_PIDNS_CHECK'];
    }
    assert.equal(plane.processAware, false);
    assert.match(plane.unavailableProcessForm('network.fromSource') ?? '', /bpf_get_current_task_btf/);
    assert.match(plane.unavailableProcessForm('network.pts') ?? '', /bpf_get_current_task_btf/);
    assert.equal(plane.unavailableProcessForm('network.matchAddresses'), undefined);
    await applyRules({
      policies: [
        makePodPolicy('sources-off', [
          { matcher: protocol('tcp'), action: Action.Block, fromSource: [srcPath(exe.a)] },
          { matcher: protocol('udp'), action: Action.Block },
        ]),
      ],
    });
    assert.deepEqual(
      await sock(workers.a, 'tcp'),
      { socket: 0, send: null },
      'the source rule never matches',
    );
    assert.deepEqual(
      await sock(workers.a, 'udp'),
      { socket: EPERM, send: null },
      'rules without one still do',
    );
    // Back to the programs with the helper for the tests after this one.
    await plane.stop({ keepEnforcing: false });
    plane = new NetworkPlane({
      loaderPath: LOADER,
      objectPath: OBJECT,
      pinDir: join(bpffs, 'net'),
      stateDir: work,
      cgroupRoot: cgRoot,
    });
    await plane.start();
    const p = plane;
    void (async () => {
      for await (const e of p.events()) events.push(e);
    })();
    assert.equal(plane.processAware, true);
  });

  it('decides as the oracle on generated rule sets with sources and pts (differential, fast-check, fixed seed)', async () => {
    const who = [
      { name: 'a', worker: (): Worker | undefined => workers.a, exe: (): string => exe.a, tty: false },
      { name: 'aTty', worker: (): Worker | undefined => workers.aTty, exe: (): string => exe.a, tty: true },
      { name: 'b', worker: (): Worker | undefined => workers.b, exe: (): string => exe.b, tty: false },
      {
        name: 'tools',
        worker: (): Worker | undefined => workers.tools,
        exe: (): string => exe.tools,
        tty: false,
      },
      {
        name: 'deep',
        worker: (): Worker | undefined => workers.deep,
        exe: (): string => exe.deep,
        tty: false,
      },
    ];
    const SOURCES: (() => SourceMatcher)[] = [
      () => srcPath(exe.a),
      () => srcPath(exe.b),
      () => srcDir(`${work}/tools/`),
      () => srcDir(`${work}/tools/`, true),
      () => srcDir(`${work}/bin/`, true),
      () => srcDir(`${work}/bin/`),
    ];
    const MATCHERS = [
      protocol('tcp'),
      protocol('udp'),
      protocol('all'),
      address('10.0.0.0/8'),
      address('10.1.0.0/16', [80]),
      address('192.0.2.0/24', [], 'udp'),
    ];
    const arbRule = fc.record({
      matcher: fc.integer({ min: 0, max: MATCHERS.length - 1 }),
      action: fc.constantFrom(Action.Block, Action.Audit, Action.Allow),
      sources: fc.subarray([0, 1, 2, 3, 4, 5], { maxLength: 2 }),
      pts: fc.boolean(),
    });
    const arbCase = fc.record({
      policies: fc.array(fc.array(arbRule, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 }),
      posture: fc.constantFrom('audit' as const, 'block' as const),
    });
    const OPS: { kind: WorkerSocketKind; op?: 'connect' | 'sendmsg'; address?: string; port?: number }[] = [
      { kind: 'tcp' },
      { kind: 'udp' },
      { kind: 'tcp', op: 'connect', address: '10.1.2.3', port: 80 },
      { kind: 'tcp', op: 'connect', address: '10.2.0.1', port: 443 },
      { kind: 'udp', op: 'sendmsg', address: '192.0.2.7', port: 53 },
    ];
    let compared = 0;
    let denied = 0;
    let alerted = 0;
    let bySource = 0;
    for (const c of fc.sample(arbCase, { numRuns: 25 })) {
      const ruleSet: RuleSet = {
        policies: c.policies.map((rules, i) =>
          makePodPolicy(
            `p${i}`,
            rules.map((r) => ({
              matcher: MATCHERS[r.matcher] ?? protocol('tcp'),
              action: r.action,
              fromSource: r.sources.map((s) => (SOURCES[s] ?? (() => srcPath(exe.a)))()),
              pts: r.pts,
            })),
          ),
        ),
      };
      await applyRules(ruleSet, { network: c.posture });
      for (const w of who) {
        for (const o of OPS) {
          const names = getWorkerSocketNames(o.kind);
          const base: OperationRequest = {
            operation: Operation.Network,
            resource: names[0] ?? '',
            socketNames: names,
            write: false,
            owner: false,
            executable: w.exe(),
            tty: w.tty,
          };
          const expectSocket = decideOperation(ruleSet, pod, base, { network: c.posture });
          const expectSend =
            o.address === undefined
              ? undefined
              : decideOperation(
                  ruleSet,
                  pod,
                  { ...base, address: o.address, port: o.port ?? 0 },
                  {
                    network: c.posture,
                  },
                );
          const noSource = decideOperation(
            ruleSet,
            pod,
            { ...base, executable: '/nowhere/x', tty: false },
            {
              network: c.posture,
            },
          );
          const before = (await plane?.stats())?.reported ?? 0;
          const got = await w.worker()?.run(o);
          assert.ok(got !== undefined);
          const what = `${w.name} ${JSON.stringify(o)} in ${JSON.stringify(c)}`;
          assert.equal(got.socket === EPERM, !expectSocket.allowed, `socket: ${what}`);
          compared++;
          let alerts = expectSocket.alert === null ? 0 : 1;
          if (!expectSocket.allowed) denied++;
          if (expectSend !== undefined && got.socket === 0) {
            assert.equal(got.send === EPERM, !expectSend.allowed, `${o.op}: ${what}`);
            compared++;
            if (!expectSend.allowed) denied++;
            if (expectSend.alert !== null) alerts++;
          }
          if (o.address === undefined && noSource.allowed !== expectSocket.allowed) bySource++;
          const reported = ((await plane?.stats())?.reported ?? 0) - before;
          assert.equal(reported, alerts, `alerts: ${what}`);
          alerted += alerts;
        }
      }
    }
    assert.equal((await plane?.stats())?.unnamedExecutables, 0, 'every executable was named');
    assert.ok(
      compared > 150 && denied > 10 && alerted > 10 && bySource > 5,
      `${compared} compared, ${denied} denied, ${alerted} alerts, ${bySource} decided by the process`,
    );
  });
});
