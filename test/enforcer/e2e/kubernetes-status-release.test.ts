// The policy status loop end to end on the real kernel, with the API server replaced by the stand-in API server
// (none can run here): a real `rtctl enforcer run --kubernetes` process (fanotify data plane, no container
// runtime: the host workload only) reads a RuntimeHostPolicy from the stand-in, blocks a tool, and writes its
// node report; the status controller (in this process, real client code) turns the report into the policy's
// Ready status; `rtctl-release` then makes the enforcer release the plane (the tool runs again) while it stays
// up, and the status turns to Released.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import {
  NODE_STATUS_DATA_KEY,
  RELEASE_CONFIGMAP_NAME,
  nodeStatusObjectName,
  parseNodeStatusReport,
  type NodeStatusReport,
} from '../../../compiler/model/node-status.js';
import {
  createControllerFeeds,
  createKubernetesStatusWriter,
} from '../../../controller/io/kubernetes-controller-io.js';
import { readPolicyStatus } from '../../../controller/policy-status.js';
import { startControllerReplica, type ControllerReplica } from '../../../controller/run-controller.js';
import type { EnforcerStatus } from '../../../enforcer/enforcer.js';
import { isRoot, requirePrereqs } from '../../support/prereq.js';
import { startStandInApiServer, type StandInApiServer } from '../../support/stand-in-api-server.js';
import { waitUntil } from '../../support/wait-until.js';
import { getJson, startEnforcer, stopHelper, type EnforcerProcess } from '../support/enforcer-process.js';

const TOOL = '/usr/local/bin/rtctl-e2e-status-tool';
const NS = 'rtctl-system';
const NODE = 'status-node';
const RHP = 'security.runtime.com/v1/runtimehostpolicies';
const runTool = () => spawnSync('/bin/sh', ['-c', TOOL], { encoding: 'utf8' });

describe('policy status and release: rtctl enforcer run --kubernetes (fanotify, real kernel) against the stand-in API server', function () {
  this.timeout(120000);
  let work = '';
  let api: StandInApiServer | undefined;
  let enforcer: EnforcerProcess | undefined;
  let controller: ControllerReplica | undefined;

  before(function () {
    requirePrereqs(this, [[isRoot(), 'root (fanotify permission events)']]);
    work = mkdtempSync(join(tmpdir(), 'rtctl-k8s-status-'));
    writeFileSync(TOOL, '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
  });

  after(async () => {
    await enforcer?.kill('SIGKILL');
    await controller?.stop();
    await api?.close();
    if (work !== '') await stopHelper(join(work, 'state', 'fanotify.sock')).catch(() => undefined);
    rmSync(TOOL, { force: true });
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('enforces, reports, gets Ready; releases on rtctl-release, stays up, and the status says Released', async () => {
    api = await startStandInApiServer();
    api.put(RHP, {
      apiVersion: 'security.runtime.com/v1',
      kind: 'RuntimeHostPolicy',
      metadata: { name: 'block-status-tool' },
      spec: {
        nodeSelector: { matchLabels: { role: 'e2e' } },
        process: { matchPaths: [{ path: TOOL }] },
        action: 'Block',
      },
    });
    api.put('v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE, labels: { role: 'e2e' } },
    });
    const kubeconfig = join(work, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: stand-in, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: u, user: {token: enforcer}}]',
        'contexts: [{name: c, context: {cluster: stand-in, user: u}}]',
        'current-context: c',
        '',
      ].join('\n'),
    );
    assert.equal(runTool().status, 0, 'the tool runs before any enforcer');
    enforcer = await startEnforcer([
      '--kubernetes',
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      NS,
      '--data-plane',
      'fanotify',
      '--node-name',
      NODE,
      '--state-dir',
      join(work, 'state'),
      '--containerd-socket',
      join(work, 'no-containerd.sock'),
      '--poll-ms',
      '200',
      '--status-interval-ms',
      '200',
    ]);
    const e = enforcer;
    await waitUntil('the tool blocked', () => runTool().status === 126, 60000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${e.stderr().slice(-2000)}`);
    });
    const report = (): NodeStatusReport | undefined => {
      const text = (
        api?.get('v1/configmaps', NS, nodeStatusObjectName(NODE))?.['data'] as
          Record<string, string> | undefined
      )?.[NODE_STATUS_DATA_KEY];
      const parsed = text === undefined ? undefined : parseNodeStatusReport(text);
      return parsed?.ok === true ? parsed.report : undefined;
    };
    const entry = await waitUntil('the node report', () =>
      report()?.policies.find((p) => p.name === 'block-status-tool'),
    );
    assert.deepEqual(
      { ...entry, uid: undefined },
      {
        kind: 'RuntimeHostPolicy',
        name: 'block-status-tool',
        uid: undefined,
        generation: 1,
        workloads: 1,
        enforced: true,
        gaps: [],
      },
    );
    assert.equal(entry.uid, api.get(RHP, '', 'block-status-tool')?.metadata.uid);
    assert.equal(report()?.plane, 'fanotify');

    const kc = api.kubeConfig('controller');
    const logger = pino({ level: 'silent' });
    controller = await startControllerReplica({
      feeds: createControllerFeeds(kc, NS, logger),
      writer: createKubernetesStatusWriter(kc),
      logger,
      minWriteIntervalMs: 200,
      debounceMs: 20,
    });
    const ready = (): string | undefined => {
      const c = readPolicyStatus(api?.get(RHP, '', 'block-status-tool')?.['status'])?.conditions[0];
      return c && `${c.status} ${c.reason} ${c.message}`;
    };
    await waitUntil('Ready True', () => ready() === 'True Enforced Enforced on 1 of 1 node');

    api.put('v1/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: RELEASE_CONFIGMAP_NAME, namespace: NS },
      data: { release: 'true' },
    });
    await waitUntil('the tool runs again', () => runTool().status === 0, 30000);
    assert.equal(runTool().stdout.trim(), 'tool-ran');
    await waitUntil('the released report', () => report()?.released === true);
    assert.equal(e.child.exitCode, null, 'the enforcer stays up');
    const status = await getJson<EnforcerStatus>(`${e.url}/status`);
    assert.equal(status.released, true);
    await waitUntil('Ready False Released', () => ready()?.startsWith('False Released '));
    // Nothing is enforced again on the next polls.
    const polls = (e.stderr().match(/enforcement state applied/g) ?? []).length;
    for (let i = 0; i < 10; i++) assert.equal(runTool().status, 0);
    assert.equal((e.stderr().match(/enforcement state applied/g) ?? []).length, polls);
    await e.kill('SIGTERM');
    assert.equal(e.child.exitCode, 0, e.stderr().slice(-2000));
  });
});
