// The binary rule table: hash function, header, determinism, validation of bad tables, and the
// property that the TypeScript reader's walk answers exactly as the decision oracle.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { decideOperation } from '../../../compiler/decide/decide.js';
import type { Workload } from '../../../compiler/decide/decision-input.js';
import {
  buildRuleTable,
  buildRuleTableImage,
  createRuleTableRecords,
  encodeRuleTable,
} from '../../../compiler/rule-table/build-rule-table.js';
import {
  loadRuleTableImage,
  readRuleTable,
  type RuleTable,
} from '../../../compiler/rule-table/read-rule-table.js';
import { hashFnv1a64, hashNodeKey } from '../../../compiler/rule-table/rule-table-format.js';
import {
  compileGlob,
  matchCompiledGlob,
  matchGlobBytes,
  tokenizeGlob,
} from '../../../compiler/rule-table/match-glob-bytes.js';
import { matchesGlob } from '../../../compiler/decide/path-match.js';
import { RULES_BACKEND } from '../../../compiler/backends/rules/rules-backend.js';
import { arbOperation, arbPath, arbPattern, arbRuleSet, arbScenario } from '../decide/arbitrary-rule-set.js';
import { Action, Operation, dir, makePodPolicy, path, pattern, srcPath } from '../decide/rule-set-builder.js';

const encoder = new TextEncoder();

function fnvReference(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

function toBig(h: { lo: number; hi: number }): bigint {
  return (BigInt(h.hi) << 32n) | BigInt(h.lo);
}

function readOk(bytes: Uint8Array): RuleTable {
  const r = readRuleTable(bytes);
  if (!r.ok) assert.fail(r.error);
  return r.table;
}

const sample = {
  policies: [
    makePodPolicy('block-etc', [
      { matcher: dir('/etc/', true), action: Action.Block, tags: ['CIS'], message: 'no /etc' },
      { matcher: path('/etc/hostname'), action: Action.Allow },
      {
        operation: Operation.Process,
        matcher: path('/bin/sh'),
        action: Action.Audit,
        fromSource: [srcPath('/bin/bash')],
      },
    ]),
    makePodPolicy('pat', [{ matcher: pattern('/home/*/secret*'), action: Action.Block }], {
      labels: { app: 'db' },
    }),
  ],
};
const web: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };

describe('rule table', () => {
  it('hashes with FNV-1a 64 (known vectors and a BigInt reference)', () => {
    assert.equal(toBig(hashFnv1a64(new Uint8Array())), 0xcbf29ce484222325n);
    assert.equal(toBig(hashFnv1a64(encoder.encode('a'))), 0xaf63dc4c8601ec8cn);
    assert.equal(toBig(hashFnv1a64(encoder.encode('foobar'))), 0x85944171f73967e8n);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 8 }),
        (key, c, k) => {
          assert.equal(toBig(hashNodeKey(c, k, key)), fnvReference(Uint8Array.from([c, k, ...key])));
        },
      ),
    );
  });

  it('writes the documented header', () => {
    const bytes = buildRuleTable(sample);
    assert.deepEqual([...bytes.subarray(0, 8)], [...encoder.encode('RTRULES'), 0]);
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    assert.equal(v.getUint16(8, true), 2);
    assert.equal(v.getUint16(10, true), 0);
    assert.equal(v.getUint32(12, true), 128);
    assert.equal(v.getUint32(16, true), bytes.length);
    assert.equal(v.getUint32(36, true), 2, 'policy_count');
    assert.equal(v.getUint32(52, true), 4, 'rule_count');
    assert.equal(bytes.length % 8, 0);
  });

  it('is deterministic: same bytes twice and for any policy order', () => {
    fc.assert(
      fc.property(arbRuleSet, (ruleSet) => {
        const a = buildRuleTable(ruleSet);
        const b = buildRuleTable({ policies: [...ruleSet.policies].reverse() });
        assert.deepEqual(Buffer.from(a), Buffer.from(buildRuleTable(ruleSet)));
        assert.deepEqual(Buffer.from(a), Buffer.from(b));
      }),
      { numRuns: 100 },
    );
  });

  it('decodes the records it encoded: records → bytes → records → the same bytes (fast-check)', () => {
    fc.assert(
      fc.property(arbRuleSet, (ruleSet) => {
        const image = buildRuleTableImage(ruleSet);
        assert.deepEqual(image.records, createRuleTableRecords(ruleSet));
        const loaded = loadRuleTableImage(image.bytes);
        if (!loaded.ok) assert.fail(loaded.error);
        assert.deepEqual(loaded.image.records, image.records);
        assert.deepEqual(Buffer.from(encodeRuleTable(loaded.image.records)), Buffer.from(image.bytes));
      }),
      { numRuns: 100, seed: 0x5eed10 },
    );
  });

  it('answers lookups by the walk on a hand-made table', () => {
    const table = readOk(buildRuleTable(sample));
    const set = table.selectPolicies(web);
    const open = (resource: string) => ({
      operation: Operation.File,
      resource,
      executable: '/bin/cat',
      write: false,
      owner: false,
    });
    assert.equal(table.decide(set, open('/etc/ssl/certs/x')).alert?.Action, 'Block');
    assert.equal(table.decide(set, open('/etc/ssl/certs/x')).alert?.Tags, 'CIS');
    assert.equal(table.decide(set, open('/etc/hostname')).allowed, true);
    assert.equal(
      table.decide(set, open('/home/u/secret')).allowed,
      true,
      'pattern policy selects app=db only',
    );
    const db = table.selectPolicies({ ...web, labels: { app: 'db' } });
    assert.equal(table.decide(db, open('/home/u/secret.txt')).allowed, false);
    assert.equal(table.decide(db, open('/home/u/sub/secret.txt')).allowed, true);
  });

  it('the reader walk equals the oracle on random rule sets, workloads and operations (fast-check)', () => {
    fc.assert(
      fc.property(arbScenario, ({ ruleSet, workload, operations, postures }) => {
        const table = readOk(buildRuleTable(ruleSet));
        const set = table.selectPolicies(workload);
        for (const op of operations) {
          const expected = decideOperation(ruleSet, workload, op, postures);
          delete expected.leastPermissiveBy;
          assert.deepEqual(table.decide(set, op, postures), expected, JSON.stringify(op));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('byte-wise glob matching equals the oracle glob on random patterns and paths (fast-check)', () => {
    fc.assert(
      fc.property(arbPattern, arbPath, (p, s) => {
        const expected = matchesGlob(p, s);
        assert.equal(matchGlobBytes(tokenizeGlob(encoder.encode(p)), encoder.encode(s)), expected);
        assert.equal(matchCompiledGlob(compileGlob(encoder.encode(p)), encoder.encode(s)), expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('matches adversarial globs in polynomial time', () => {
    const p = `/${'*a'.repeat(40)}b`;
    const s = `/${'a'.repeat(400)}`;
    assert.equal(matchGlobBytes(tokenizeGlob(encoder.encode(p)), encoder.encode(s)), false);
    assert.equal(matchesGlob('/**/**/**/**/**/**/**/x', `/${'a/'.repeat(50)}y`), false);
  });

  const badTables: { name: string; mutate: (b: Uint8Array) => Uint8Array; error: RegExp }[] = [
    { name: 'empty input', mutate: () => new Uint8Array(), error: /shorter than the 128-byte header/ },
    { name: 'bad magic', mutate: (b) => (b.set([0x58], 0), b), error: /bad magic/ },
    {
      name: 'other major version',
      mutate: (b) => (new DataView(b.buffer).setUint16(8, 3, true), b),
      error: /unsupported rule table version 3/,
    },
    { name: 'truncated', mutate: (b) => b.slice(0, b.length - 8), error: /file_size/ },
    {
      name: 'rule section outside the file',
      mutate: (b) => (new DataView(b.buffer).setUint32(52, 1_000_000, true), b),
      error: /rule section lies outside/,
    },
    {
      name: 'string ref out of range',
      mutate: (b) => {
        const v = new DataView(b.buffer);
        v.setUint32(v.getUint32(48, true) + 8, 0x7ffffff0, true);
        return b;
      },
      error: /outside the string table/,
    },
    {
      name: 'bucket count not a power of two',
      mutate: (b) => (new DataView(b.buffer).setUint32(84, 12, true), b),
      error: /power of two/,
    },
  ];
  for (const c of badTables) {
    it(`refuses a bad table: ${c.name}`, () => {
      const r = readRuleTable(c.mutate(buildRuleTable(sample)));
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.error, c.error);
    });
  }

  it('never throws on corrupted tables: reading and lookups either work or report an error (fast-check)', () => {
    const good = buildRuleTable(sample);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        arbOperation,
        (flips, op) => {
          const bytes = Uint8Array.from(good);
          for (const [at, v] of flips) bytes[at] = v;
          const r = readRuleTable(bytes);
          if (r.ok) r.table.decide(r.table.selectPolicies(web), op);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('is registered as the rules backend with a table and a manifest', () => {
    const out = RULES_BACKEND.emit({ ruleSet: sample, documents: [] });
    assert.deepEqual(
      out.artifacts.map((a) => a.path),
      ['rules/rule-table.bin', 'rules/rule-table.json'],
    );
    const manifest = JSON.parse(String(out.artifacts[1]?.content)) as {
      version: string;
      size: number;
      policies: unknown[];
    };
    assert.equal(manifest.version, '2.0');
    assert.equal(manifest.policies.length, 2);
    assert.equal(manifest.size, (out.artifacts[0]?.content as Uint8Array).length);
  });
});
