// What the install, verify and uninstall runs share: the client, where progress lines go, the clock, and
// bounded waits (poll a condition until it holds or the deadline passes; never a fixed sleep).
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../io/kube-client.js';

/** Exit codes: 1 when something did not become ready (or release) in time, 2 for errors and refusals. */
export const ExitCode = { NotReady: 1, Error: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure of a run, with its exit code; the message is for a person. */
export class RunError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'RunError';
  }
}

/** The environment of a run. */
export interface RunContext {
  client: KubeClient;
  /** One line of progress (the CLI writes them to stderr). */
  progress(line: string): void;
  now(): Date;
  /** Interval between polls of a wait. */
  pollMs: number;
}

const FIRST_POLL_MS = 100;

/** A point in time after which waits give up. */
export interface Deadline {
  at: number;
  /** The timeout it was made from, for messages (`300s`). */
  label: string;
}

/** A deadline `ms` from now. */
export function deadlineIn(ctx: RunContext, ms: number): Deadline {
  return { at: ctx.now().getTime() + ms, label: `${Math.round(ms / 1000)}s` };
}

/**
 * Polls `check` (undefined = done, else what is still missing) until it is done or the deadline passes;
 * resolves to undefined or the last thing missing.
 */
export async function waitUntil(
  ctx: RunContext,
  deadline: Deadline,
  check: () => Promise<string | undefined>,
): Promise<string | undefined> {
  // Quick first polls (a CRD is usually Established within a second), then every pollMs.
  for (let delay = Math.min(FIRST_POLL_MS, ctx.pollMs); ; delay = Math.min(delay * 2, ctx.pollMs)) {
    const missing = await check();
    if (missing === undefined) return undefined;
    const left = deadline.at - ctx.now().getTime();
    if (left <= 0) return missing;
    await sleep(Math.min(delay, left));
  }
}
