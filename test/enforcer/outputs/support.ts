// Shared by the alert-output tests: a sample alert record and a bounded wait for a condition.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';

/** Alert number `n` (distinct Resource and HostPID), with fields overridden. */
export function sampleAlert(n: number, over: Partial<AlertRecord> = {}): AlertRecord {
  return {
    Timestamp: 1795333130 + n,
    UpdatedTime: `2026-11-22T07:38:${String(n % 60).padStart(2, '0')}.349923Z`,
    ClusterName: 'c',
    HostName: 'node-1',
    NamespaceName: 'ns-a',
    PodName: 'web-1',
    Labels: 'app=web,tier=front',
    ContainerID: 'abc',
    ContainerName: 'web',
    ContainerImage: 'img@sha256:00',
    HostPPID: 1,
    HostPID: 100 + n,
    PPID: 0,
    PID: n,
    ParentProcessName: '/bin/sh',
    ProcessName: '/bin/sleep',
    PolicyName: 'block-sleep',
    Severity: '5',
    Type: 'MatchedPolicy',
    Source: '/bin/sh',
    Operation: 'Process',
    Resource: `/bin/r${n}`,
    Data: 'syscall=SYS_EXECVE',
    Enforcer: 'Fanotify',
    Action: 'Block',
    Result: 'Operation not permitted',
    ...over,
  };
}

/** Polls `cond` until it holds; the bound only catches a hang (it does not judge speed). */
export async function waitFor(cond: () => boolean, what = 'condition', ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`);
    await sleep(20);
  }
}
