// The last line the alert server sends a follower it disconnects for falling behind: how many alerts the
// follower had not read and the sequence number to resume after (`GET /alerts?after=<resumeAfter>`). The
// line is a JSON object no alert record can be (alert records have no `rtctlStreamEnd` field).

/** Why the server ended a stream. */
export const StreamEndReason = {
  /** The follower read too slowly: it was more than the allowed number of alerts behind. */
  Behind: 'behind',
} as const;
/** Why the server ended a stream. */
export type StreamEndReason = (typeof StreamEndReason)[keyof typeof StreamEndReason];

/** The final line of a stream the server ended. */
export interface StreamEnd {
  rtctlStreamEnd: StreamEndReason;
  /** Alerts published after `resumeAfter` that this connection did not receive. */
  missed: number;
  /** The sequence number of the last alert received on this connection; resume with `after=` this. */
  resumeAfter: number;
  message: string;
}

/** The stream-end line for a follower that fell behind (without the newline). */
export function formatStreamEnd(missed: number, resumeAfter: number): string {
  const end: StreamEnd = {
    rtctlStreamEnd: StreamEndReason.Behind,
    missed,
    resumeAfter,
    message: `disconnected for reading too slowly: ${missed} alerts not sent; resume with after=${resumeAfter}`,
  };
  return JSON.stringify(end);
}

/** The stream end this parsed line holds, or undefined when it is something else (an alert). */
export function asStreamEnd(value: unknown): StreamEnd | undefined {
  if (typeof value !== 'object' || value === null || !('rtctlStreamEnd' in value)) return undefined;
  const v = value as Record<string, unknown>;
  const missed = v['missed'];
  const resumeAfter = v['resumeAfter'];
  if (
    v['rtctlStreamEnd'] !== StreamEndReason.Behind ||
    typeof missed !== 'number' ||
    !Number.isSafeInteger(missed) ||
    missed < 0 ||
    typeof resumeAfter !== 'number' ||
    !Number.isSafeInteger(resumeAfter) ||
    resumeAfter < 0
  )
    return undefined;
  return {
    rtctlStreamEnd: StreamEndReason.Behind,
    missed,
    resumeAfter,
    message: typeof v['message'] === 'string' ? v['message'] : '',
  };
}
