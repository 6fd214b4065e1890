// The lines git gives push hooks on stdin, parsed (pure): pre-receive `<old> <new> <ref>`, pre-push
// `<local ref> <local id> <remote ref> <remote id>`, into ref updates. Object names must be hexadecimal ids
// (SHA-1 or SHA-256): nothing from stdin reaches a git command line unless it is one.
import { isZeroId } from '../io/git-tree.js';

/** One ref a push changes: what the receiving side had (`oldId`, zeros for a new ref) and gets (`newId`). */
export interface RefUpdate {
  oldId: string;
  /** Zeros when the ref is deleted. */
  newId: string;
  /** The ref on the receiving side. */
  ref: string;
}

/** Updates, or the first line that does not follow the protocol. */
export type ParseUpdatesResult = { ok: true; updates: RefUpdate[] } | { ok: false; error: string };

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

function checkIds(n: number, ids: readonly string[]): string | undefined {
  const bad = ids.find((id) => !OBJECT_ID.test(id));
  return bad === undefined
    ? undefined
    : `line ${n}: ${JSON.stringify(bad)} is not an object name (40 or 64 hexadecimal digits)`;
}

function parseLines(
  text: string,
  fields: number,
  shape: string,
  toUpdate: (parts: string[]) => { ids: string[]; update: RefUpdate },
): ParseUpdatesResult {
  const updates: RefUpdate[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    const parts = line.split(' ');
    if (parts.length !== fields || parts.some((p) => p === '')) {
      return { ok: false, error: `line ${i + 1}: expected ${shape}, got ${JSON.stringify(line)}` };
    }
    const { ids, update } = toUpdate(parts);
    const error = checkIds(i + 1, ids);
    if (error !== undefined) return { ok: false, error };
    updates.push(update);
  }
  return { ok: true, updates };
}

/** Parses a pre-receive hook's stdin. */
export function parsePreReceive(text: string): ParseUpdatesResult {
  return parseLines(text, 3, '"<old> <new> <ref>"', ([oldId = '', newId = '', ref = '']) => ({
    ids: [oldId, newId],
    update: { oldId, newId, ref },
  }));
}

/** Parses a pre-push hook's stdin. */
export function parsePrePush(text: string): ParseUpdatesResult {
  return parseLines(
    text,
    4,
    '"<local ref> <local id> <remote ref> <remote id>"',
    ([, localId = '', remoteRef = '', remoteId = '']) => ({
      ids: [localId, remoteId],
      update: { oldId: remoteId, newId: localId, ref: remoteRef },
    }),
  );
}

/** True when the update deletes its ref. */
export function isDeletion(u: RefUpdate): boolean {
  return isZeroId(u.newId);
}

/** True when the update creates its ref. */
export function isCreation(u: RefUpdate): boolean {
  return isZeroId(u.oldId);
}
