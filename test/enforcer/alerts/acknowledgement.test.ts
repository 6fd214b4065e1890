// The enforcer acknowledges a data plane's events in order: acknowledging `seq` says every event up to it is
// handled (the helper then forgets them), so no acknowledgement may come before an earlier event's alert is in
// the alert log, an event of an unknown workload (no alert to write) included. The kernel data plane is
// replaced by an in-memory one that yields a burst of events (the edge that needs root); the alert log is the
// real one, on a temporary file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { EnforcementTarget } from '../../../compiler/enforcement/enforcement-table.js';
import { createAlertHub } from '../../../enforcer/alerts/alert-hub.js';
import { createEnforcer } from '../../../enforcer/enforcer.js';
import { openAlertLog } from '../../../enforcer/io/alert-log.js';
import { buildSnapshot } from '../../../enforcer/policy-snapshot.js';
import { waitUntil } from '../../support/wait-until.js';
import { auditEvent, HOST_AUDIT_POLICY, memoryPlane } from '../support/memory-plane.js';

describe('enforcer: acknowledgement of data-plane events (in-memory plane, real alert log)', () => {
  it('acknowledges a sequence number only once every earlier alert is written, unknown workloads included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtctl-ack-'));
    const logPath = join(dir, 'alerts.jsonl');
    const total = 600;
    // Every third event is of a workload the enforcer does not know: it has no alert, and comes right after
    // alerts still on their way to the log.
    const events = Array.from({ length: total }, (_, i) =>
      auditEvent(i + 1, `/etc/shadow-${i + 1}`, i % 3 === 2 ? 'gone' : 'host'),
    );
    const violations: string[] = [];
    const acks: number[] = [];
    const loggedResources = (): Set<string> =>
      new Set(
        readFileSync(logPath, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => (JSON.parse(l) as { Resource: string }).Resource),
      );
    const plane = memoryPlane({
      async *events() {
        // Bursts within one turn of the event loop, as a batch from the helper arrives.
        for (let i = 0; i < events.length; i += 50) {
          for (const e of events.slice(i, i + 50)) yield e;
          await new Promise((r) => setImmediate(r));
        }
      },
      acknowledge(seq: number) {
        acks.push(seq);
        const logged = loggedResources();
        for (const e of events)
          if (e.seq !== undefined && e.seq <= seq && e.workload === 'host' && !logged.has(e.resource))
            violations.push(`ACK ${seq} before the alert of event ${e.seq} was written`);
      },
    });
    const log = openAlertLog({ path: logPath, logger: pino({ level: 'silent' }) });
    const snapshot = buildSnapshot([{ file: 'host-guard.yaml', text: HOST_AUDIT_POLICY }]);
    const enforcer = createEnforcer({
      source: { start: () => Promise.resolve(snapshot), stop: () => Promise.resolve() },
      containers: { list: () => Promise.resolve([]) },
      plane,
      enforcementTarget: EnforcementTarget.Fanotify,
      hub: createAlertHub(),
      clusterName: 'c',
      nodeName: 'n',
      nodeLabels: {},
      pollMs: 3600000,
      alertLog: log,
      logger: pino({ level: 'silent' }),
    });
    try {
      await enforcer.start();
      await waitUntil('the last event acknowledged', () => acks.includes(total), 30000);
    } finally {
      await enforcer.stop({ keepEnforcing: false });
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(violations, []);
    assert.deepEqual(
      acks,
      [...acks].sort((a, b) => a - b),
      'acknowledgements only move forward',
    );
  });
});
