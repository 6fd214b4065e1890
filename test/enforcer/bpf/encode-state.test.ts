// Encoding one enforcement state into the BPF maps' entries: layouts match rtctl-maps.h, the index
// lists come from the table's records, limits and bad tables are errors with a code.
import assert from 'node:assert/strict';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { loadRuleTableImage } from '../../../compiler/rule-table/read-rule-table.js';
import type { RuleTableRecords } from '../../../compiler/rule-table/rule-table-records.js';
import { lowerDocuments } from '../../../compiler/lower/lower.js';
import { lintTexts } from '../../../compiler/lint.js';
import { encodeState, type KeyedWorkload } from '../../../enforcer/bpf/encode-state.js';
import {
  RT_INDEX_KEY_SIZE,
  RT_RULE_SIZE,
  RT_WORKLOAD_SIZE,
  WorkloadKeyKind,
} from '../../../enforcer/bpf/map-layout.js';
import { formatOpenFlags, getSyscallName } from '../../../enforcer/bpf/syscall-names.js';

function tableOf(yaml: string): RuleTableRecords {
  const lint = lintTexts([{ file: 'p.yaml', text: yaml }]);
  return buildRuleTableImage(lowerDocuments(lint.documents)).records;
}

const POLICY = `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata: { name: p, namespace: ns }
spec:
  selector: { matchLabels: { app: a } }
  process:
    matchPaths:
      - path: /bin/sleep
        fromSource: [{ path: /bin/bash }]
  file:
    matchDirectories:
      - dir: /etc/
        recursive: true
        readOnly: true
    matchPatterns:
      - pattern: /home/*/.ssh/*
  action: Block
`;

const WORKLOAD: KeyedWorkload = {
  name: 'c1',
  keyKind: WorkloadKeyKind.MountNamespace,
  keyId: 4026531840n,
  policies: [0],
  postures: { file: 'block', network: 'audit', capabilities: 'audit' },
};

/** A key or value in the loader's wire form (hex, trailing zero bytes left out) back to its full size. */
function wire(hex: string | undefined, size: number): Buffer {
  assert.ok(hex !== undefined && hex.length % 2 === 0 && hex.length <= size * 2, `bad wire hex ${hex}`);
  const out = Buffer.alloc(size);
  Buffer.from(hex, 'hex').copy(out);
  return out;
}

function entriesOf(map: string, slot = 1): string[][] {
  const r = encodeState(tableOf(POLICY), slot, [WORKLOAD]);
  assert.ok(r.ok);
  return r.state.entries.filter((e) => e[0] === map).map((e) => [...e]);
}

describe('BPF plane: state encoding', () => {
  it('writes one rule entry per table rule, in the slot given', () => {
    const rules = entriesOf('rt_rules');
    assert.equal(rules.length, 3);
    for (const [, key, value] of rules) {
      assert.equal(wire(value, RT_RULE_SIZE).readUInt32LE(12), 1, 'present');
      assert.ok(wire(key, 4).readUInt32LE(0) >= 8192, 'slot 1 indices start at RT_MAX_RULES');
    }
  });

  it('keys the index by slot, class, kind and the zero-padded key', () => {
    const index = entriesOf('rt_index');
    const keys = index.map(([, k]) => wire(k, RT_INDEX_KEY_SIZE));
    assert.ok(keys.every((k) => k.length === RT_INDEX_KEY_SIZE && k.readUInt32LE(0) === 1));
    const texts = keys.map((k) => `${k[4]}:${k[5]}:${k.subarray(8).toString('utf8').replace(/\0+$/, '')}`);
    assert.deepEqual(texts.sort(), ['0:1:/bin/sleep', '1:3:/etc/', '1:4:/home/'].sort());
  });

  it('gives the fromSource path an id and the workload its posture and policy bits', () => {
    const sources = entriesOf('rt_sources');
    assert.equal(sources.length, 1);
    const value = wire(sources[0]?.[2], 16);
    assert.equal(value.readInt32LE(0), 0);
    assert.equal(value.readInt32LE(4), -1);
    const [w] = entriesOf('rt_workloads');
    const body = wire(w?.[2], RT_WORKLOAD_SIZE);
    assert.equal(body.length, RT_WORKLOAD_SIZE);
    assert.deepEqual([...body.subarray(4, 8)], [1, 1, 0, 0]);
    assert.equal(body[9], 1, 'has_sources');
    assert.equal(body[16], 1, 'policy 0 selected');
    const key = wire(w?.[1], 16);
    assert.equal(key.readUInt32LE(4), WorkloadKeyKind.MountNamespace);
    assert.equal(key.readBigUInt64LE(8), 4026531840n);
  });

  it('leaves the trailing zero bytes of keys and values out of the wire form, never a non-zero one', () => {
    const index = entriesOf('rt_index');
    for (const [, k, v] of index) {
      assert.ok(k !== undefined && v !== undefined);
      // Shorter than the zero-padded key, and ends with the last byte of the path (never a zero byte).
      assert.ok(k.length < RT_INDEX_KEY_SIZE * 2);
      assert.notEqual(k.slice(-2), '00');
      assert.notEqual(v.slice(-2), '00');
    }
    const etc = index
      .map(([, k]) => wire(k, RT_INDEX_KEY_SIZE))
      .find((k) => k.subarray(8, 13).toString('utf8') === '/etc/');
    assert.ok(etc, 'the /etc/ node');
    assert.equal(etc[13], 0);
  });

  it('never receives a bad table: loading its bytes refuses it first, with the reader code', () => {
    // The encoder takes records; bytes reach a plane only through loadRuleTableImage, which validates.
    const r = loadRuleTableImage(new Uint8Array(16));
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.code, 'RULE_TABLE_NOT_A_TABLE');
  });

  it('reports a glob beyond the automaton (63 tokens) with BPF_LIMIT', () => {
    const long = `/${'d'.repeat(70)}/*`;
    const r = encodeState(tableOf(POLICY.replace('/home/*/.ssh/*', long)), 0, [WORKLOAD]);
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.error.code, 'BPF_LIMIT');
      assert.match(r.error.message, /more than 63 tokens/);
    }
  });

  it('reports a policy index outside the table with BPF_LIMIT', () => {
    const r = encodeState(tableOf(POLICY), 0, [{ ...WORKLOAD, policies: [5] }]);
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error.message, /policy index 5/);
  });

  it('names system calls and open flags as alert Data does', () => {
    assert.equal(getSyscallName(59), 'SYS_EXECVE');
    assert.equal(getSyscallName(257), 'SYS_OPENAT');
    assert.equal(getSyscallName(-1), '');
    assert.equal(formatOpenFlags(0), 'O_RDONLY');
    assert.equal(formatOpenFlags(0o2101), 'O_WRONLY|O_CREAT|O_APPEND');
  });
});
