// Encodes the enforcement state for the fanotify helper's STATE command (format in fanotify-helper.c).
import { Operation } from '../../compiler/ir/rule-set.js';
import { getPosture, Posture } from '../../compiler/model/posture.js';
import type { EnforcementState } from '../data-plane.js';

/** The helper's class order. */
const CLASS_ORDER = [Operation.Process, Operation.File, Operation.Network, Operation.Capabilities] as const;

const KEY_PATTERN = /^[A-Za-z0-9._:-]{1,127}$/;

function letter(p: Posture): string {
  return p === Posture.Block ? 'b' : 'a';
}

/** What the STATE command carries: the helper loads the table's bytes (it needs no records). */
export interface HelperState extends Omit<EnforcementState, 'table'> {
  table: { readonly bytes: Uint8Array };
}

/** The full `STATE <n>\n<payload>` command. Throws on a workload key the protocol cannot carry (a bug). */
export function encodeHelperState(state: HelperState): Uint8Array {
  const lines = [`generation ${state.generation}`];
  for (const w of state.workloads) {
    if (!KEY_PATTERN.test(w.anchor.key)) throw new Error(`workload key not encodable: ${w.anchor.key}`);
    const postures = CLASS_ORDER.map((op) => letter(getPosture(w.postures, op))).join('');
    const policies = w.policies.length > 0 ? w.policies.join(',') : '-';
    lines.push(`workload ${w.anchor.key} ${w.anchor.host ? 1 : 0} ${w.anchor.pid} ${postures} ${policies}`);
  }
  const head = Buffer.from(`${lines.join('\n')}\ntable ${state.table.bytes.byteLength}\n`, 'utf8');
  const payload = Buffer.concat([head, Buffer.from(state.table.bytes)]);
  return Buffer.concat([Buffer.from(`STATE ${payload.byteLength}\n`, 'utf8'), payload]);
}
