// Network (socket create/connect by protocol) and Capabilities (capable()) decisions on the BPF-LSM
// plane, each checked against the oracle: a Block on tcp denies socket() with EACCES, an Audit on udp
// passes and reports, a Block on `chown` makes chown(2) fail for the workload only, and a fromSource
// scoped rule applies to its executable alone.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { decideOperation } from '../../../../compiler/decide/decide.js';
import { getSocketNames } from '../../../../compiler/decide/socket-names.js';
import type { OperationRequest, Workload } from '../../../../compiler/decide/decision-input.js';
import type { BpfLsmPlane } from '../../../../enforcer/bpf/bpf-lsm-plane.js';
import {
  AUDIT_POSTURES,
  EventCollector,
  buildTable,
  compileRuleSet,
  createNamespaceWorkload,
  runInCgroup,
  runInNamespace,
  startPlane,
  type NamespaceWorkload,
} from './guest-support.js';

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: net-caps
  namespace: guest
spec:
  selector:
    matchLabels:
      app: net
  network:
    matchProtocols:
      - protocol: tcp
        action: Block
      - protocol: udp
        action: Audit
      - protocol: icmp
        fromSource:
          - path: /usr/bin/busybox
        action: Block
  capabilities:
    matchCapabilities:
      - capability: chown
        action: Block
  action: Block
`;

const PYTHON = '/usr/bin/python3';
const PY_ACTOR = '/usr/bin/python3.11';
const socketScript = (type: string, proto = 0): string =>
  `${PYTHON} -c 'import socket
try:
    socket.socket(socket.AF_INET, socket.${type}, ${proto}); print("ok")
except OSError as e:
    print("errno", e.errno)'`;

const WORKLOAD: Workload = { kind: 'container', namespace: 'guest', labels: { app: 'net' }, nodeLabels: {} };

describe('BPF-LSM: network and capabilities decisions', function () {
  this.timeout(120_000);
  let plane: BpfLsmPlane;
  let events: EventCollector;
  let ns: NamespaceWorkload;
  let ruleSet: ReturnType<typeof compileRuleSet>;

  const oracleAllows = (req: OperationRequest): boolean =>
    decideOperation(ruleSet, WORKLOAD, req, AUDIT_POSTURES).allowed;

  before(async () => {
    ruleSet = compileRuleSet({ 'net.yaml': POLICY });
    const { image } = buildTable(ruleSet);
    plane = await startPlane('net');
    events = new EventCollector(plane);
    ns = createNamespaceWorkload('net');
    await plane.apply({
      generation: 1,
      table: image,
      workloads: [{ anchor: ns.anchor, policies: [0], postures: AUDIT_POSTURES }],
    });
    writeFileSync('/tmp/chown-target', 'x');
  });

  after(async () => {
    ns.stop();
    await plane.stop({ keepEnforcing: false });
    await events.finished();
  });

  it('denies a tcp socket with EACCES and reports Network/Block', async () => {
    const r = runInNamespace(ns.anchor.pid, socketScript('SOCK_STREAM'));
    assert.equal(r.stdout.trim(), 'errno 13', r.stderr);
    assert.equal(
      oracleAllows({
        operation: 'Network',
        resource: 'tcp',
        executable: PY_ACTOR,
        write: false,
        owner: true,
      }),
      false,
    );
    const e = await events.waitFor((x) => x.operation === 'Network' && x.resource === 'tcp');
    assert.ok(e);
    assert.equal(e.action, 'Block');
    assert.equal(e.policyName, 'net-caps');
    assert.match(e.syscallArgs, /domain=2 type=1/);
  });

  it('lets a udp socket through and reports Network/Audit', async () => {
    const r = runInNamespace(ns.anchor.pid, socketScript('SOCK_DGRAM'));
    assert.equal(r.stdout.trim(), 'ok', r.stderr);
    assert.equal(
      oracleAllows({
        operation: 'Network',
        resource: 'udp',
        executable: PY_ACTOR,
        write: false,
        owner: true,
      }),
      true,
    );
    const e = await events.waitFor((x) => x.operation === 'Network' && x.resource === 'udp');
    assert.ok(e);
    assert.equal(e.action, 'Audit');
  });

  it('applies a fromSource-scoped protocol rule only to its executable', () => {
    // A raw ICMP socket is named raw and icmp (docs/semantics.md "Socket names"); the icmp rule is busybox's.
    const r = runInNamespace(ns.anchor.pid, socketScript('SOCK_RAW', 1));
    assert.equal(r.stdout.trim(), 'ok', r.stderr);
    assert.equal(
      oracleAllows({
        operation: 'Network',
        resource: 'raw',
        socketNames: getSocketNames({ family: 2, type: 3, protocol: 1 }),
        executable: PY_ACTOR,
        write: false,
        owner: true,
      }),
      true,
    );
  });

  it('names a raw ICMP socket icmp too: busybox ping (a raw ICMP socket as root) is denied by the icmp rule', async () => {
    const r = runInNamespace(ns.anchor.pid, '/usr/bin/busybox ping -c 1 -W 1 127.0.0.1');
    assert.notEqual(r.status, 0, r.stdout);
    assert.match(r.stderr, /raw socket|Permission denied/i);
    assert.equal(
      oracleAllows({
        operation: 'Network',
        resource: 'raw',
        socketNames: getSocketNames({ family: 2, type: 3, protocol: 1 }),
        executable: '/usr/bin/busybox',
        write: false,
        owner: true,
      }),
      false,
    );
    const e = await events.waitFor(
      (x) => x.operation === 'Network' && x.resource === 'raw' && x.processName === '/usr/bin/busybox',
    );
    assert.ok(e);
    assert.equal(e.action, 'Block');
    assert.equal(e.policyName, 'net-caps');
    assert.match(e.syscallArgs, /domain=2 type=3 protocol=1/);
  });

  it('denies chown(2) under a Block on the chown capability, for the workload only', async () => {
    const r = runInNamespace(ns.anchor.pid, '/usr/bin/chown 1 /tmp/chown-target');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /not permitted|Permission denied/);
    assert.equal(
      oracleAllows({
        operation: 'Capabilities',
        resource: 'chown',
        executable: '/usr/bin/chown',
        write: false,
        owner: true,
      }),
      false,
    );
    const e = await events.waitFor((x) => x.operation === 'Capabilities' && x.resource === 'chown');
    assert.ok(e);
    assert.equal(e.processName, '/usr/bin/chown');
    const outside = runInCgroup('/', '/usr/bin/chown 1 /tmp/chown-target');
    assert.equal(outside.status, 0, outside.stderr);
  });
});
