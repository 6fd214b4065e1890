// The rule table layout has one C header (compiler/rule-table/rule-table-layout.h) and one TypeScript
// constants module (rule-table-format.ts). This test compiles a small C program against the header that
// prints every size, offset and code as JSON, and compares each with the TypeScript constant of that name.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ACTION_CODES,
  ALLOW_ADDRESS_BIT,
  IP_PROTOCOL_NUMBERS,
  CLASS_CODES,
  FNV_OFFSET,
  FNV_PRIME,
  HEADER_SIZE,
  Header,
  LABEL_RECORD_SIZE,
  LabelField,
  LabelOp,
  MAGIC,
  MIN_BUCKETS,
  MatcherCode,
  NODE_RECORD_SIZE,
  NodeField,
  NodeKind,
  POLICY_KIND_CODES,
  POLICY_RECORD_SIZE,
  PolicyField,
  RULE_RECORD_SIZE,
  RuleField,
  RuleFlag,
  SECTION_ALIGN,
  SOURCE_RECORD_SIZE,
  SourceCode,
  SourceField,
  VERSION_MAJOR,
  VERSION_MINOR,
} from '../../../compiler/rule-table/rule-table-format.js';
import { Action, Operation } from '../../../compiler/ir/rule-set.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';

const LAYOUT_DIR = resolve(fileURLToPath(import.meta.url), '../../../../compiler/rule-table');

/** The C field name of a TypeScript field name (camelCase to snake_case). */
function toSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `[json key, C expression]` pairs printed by the program. */
function probeExpressions(): [string, string][] {
  const out: [string, string][] = [];
  const add = (key: string, expr: string): void => void out.push([key, expr]);
  for (const name of ['HEADER', 'POLICY', 'LABEL', 'RULE', 'SOURCE', 'NODE'])
    add(`size.${name}`, `RT_TABLE_${name}_SIZE`);
  for (const [name, struct] of [
    ['header', 'rt_table_header'],
    ['policy', 'rt_table_policy'],
    ['label', 'rt_table_label'],
    ['rule', 'rt_table_rule'],
    ['source', 'rt_table_source'],
    ['node', 'rt_table_node'],
  ] as const)
    add(`sizeof.${name}`, `sizeof(struct ${struct})`);
  for (const f of Object.keys(Header)) add(`header.${f}`, `RT_OFFSETOF(rt_table_header, ${toSnake(f)})`);
  for (const f of Object.keys(PolicyField)) {
    const c = f === 'namespace' ? 'namespace_' : toSnake(f);
    add(`policy.${f}`, `RT_OFFSETOF(rt_table_policy, ${c})`);
  }
  for (const f of Object.keys(LabelField)) add(`label.${f}`, `RT_OFFSETOF(rt_table_label, ${f})`);
  for (const f of Object.keys(RuleField)) add(`rule.${f}`, `RT_OFFSETOF(rt_table_rule, ${toSnake(f)})`);
  for (const f of Object.keys(SourceField)) add(`source.${f}`, `RT_OFFSETOF(rt_table_source, ${f})`);
  for (const f of Object.keys(NodeField)) {
    // The u64 hash is written as two u32 halves, low half first (little-endian).
    if (f === 'hashLo') add(`node.${f}`, 'RT_OFFSETOF(rt_table_node, hash)');
    else if (f === 'hashHi') add(`node.${f}`, 'RT_OFFSETOF(rt_table_node, hash) + 4');
    else add(`node.${f}`, `RT_OFFSETOF(rt_table_node, ${toSnake(f)})`);
  }
  for (const c of ['PROCESS', 'FILE', 'NETWORK', 'CAPABILITIES']) add(`class.${c}`, `RT_CLASS_${c}`);
  for (const a of ['ALLOW', 'AUDIT', 'BLOCK']) add(`action.${a}`, `RT_ACTION_${a}`);
  for (const m of ['PATH', 'EXECNAME', 'DIRECTORY', 'PATTERN', 'PROTOCOL', 'CAPABILITY', 'ADDRESS'])
    add(`matcher.${m}`, `RT_MATCH_${m}`);
  for (const f of ['RECURSIVE', 'READONLY', 'OWNERONLY', 'PTS', 'ARGS']) add(`flag.${f}`, `RT_FLAG_${f}`);
  for (const l of ['EQUALS', 'IN', 'NOT_IN']) add(`label.op.${l}`, `RT_LABEL_${l}`);
  for (const s of ['PATH', 'DIRECTORY']) add(`source.kind.${s}`, `RT_SOURCE_${s}`);
  for (const k of ['RUNTIME', 'HOST']) add(`policy.kind.${k}`, `RT_POLICY_${k}`);
  for (const n of [
    'PATH',
    'EXECNAME',
    'DIR',
    'PATTERN_DIR',
    'PROTOCOL',
    'CAPABILITY',
    'ALLOW_SOURCE_PATH',
    'ALLOW_SOURCE_DIR',
    'ADDRESS',
    'ALLOW_ADDRESS_SOURCE_PATH',
    'ALLOW_ADDRESS_SOURCE_DIR',
  ])
    add(`node.kind.${n}`, `RT_NODE_${n}`);
  add('allowAddressBit', 'RT_ALLOW_ADDRESS_BIT');
  for (const p of ['ICMP', 'TCP', 'UDP', 'ICMPV6', 'SCTP']) add(`ipproto.${p}`, `RT_IPPROTO_${p}`);
  add('version.major', 'RT_TABLE_VERSION_MAJOR');
  add('version.minor', 'RT_TABLE_VERSION_MINOR');
  add('minBuckets', 'RT_TABLE_MIN_BUCKETS');
  add('sectionAlign', 'RT_TABLE_SECTION_ALIGN');
  add('magicSize', 'RT_TABLE_MAGIC_SIZE');
  return out;
}

/** Compiles and runs the probe program; returns what it printed. */
function runProbe(): Record<string, string> {
  const work = mkdtempSync(join(tmpdir(), 'rtctl-layout-'));
  try {
    const lines = probeExpressions().map(
      ([key, expr], i) =>
        `  printf("%s\\"${key}\\":\\"%llu\\"", ${i === 0 ? '""' : '","'}, (unsigned long long)(${expr}));`,
    );
    const source = [
      '#include <stdio.h>',
      '#include "rule-table-layout.h"',
      'int main(void) {',
      '  printf("{");',
      ...lines,
      '  printf(",\\"magic\\":\\"");',
      '  for (int i = 0; i < RT_TABLE_MAGIC_SIZE; i++) printf("%02x", (unsigned char)RT_TABLE_MAGIC[i]);',
      '  printf("\\",\\"fnv.offset\\":\\"%llx\\",\\"fnv.prime\\":\\"%llx\\"}\\n", RT_FNV_OFFSET, RT_FNV_PRIME);',
      '  return 0;',
      '}',
    ].join('\n');
    writeFileSync(join(work, 'probe.c'), source);
    const exe = join(work, 'probe');
    execFileSync(
      'cc',
      ['-std=c11', '-Wall', '-Werror', `-I${LAYOUT_DIR}`, '-o', exe, join(work, 'probe.c')],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    return JSON.parse(execFileSync(exe, { encoding: 'utf8' })) as Record<string, string>;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe('rule table layout: the C header and the TypeScript constants agree', function () {
  this.timeout(60000);
  let c: Record<string, string> = {};

  before(function () {
    requirePrereqs(this, [[hasCommand('cc'), 'a C compiler (cc) to compile rule-table-layout.h']]);
    c = runProbe();
  });

  const num = (key: string): number => {
    const v = c[key];
    assert.ok(v !== undefined, `the probe printed ${key}`);
    return Number(v);
  };

  it('has the same magic, version, sizes and alignment', () => {
    assert.equal(c['magic'], Buffer.from(MAGIC).toString('hex'));
    assert.equal(num('version.major'), VERSION_MAJOR);
    assert.equal(num('version.minor'), VERSION_MINOR);
    const sizes: [string, number][] = [
      ['HEADER', HEADER_SIZE],
      ['POLICY', POLICY_RECORD_SIZE],
      ['LABEL', LABEL_RECORD_SIZE],
      ['RULE', RULE_RECORD_SIZE],
      ['SOURCE', SOURCE_RECORD_SIZE],
      ['NODE', NODE_RECORD_SIZE],
    ];
    for (const [name, size] of sizes) assert.equal(num(`size.${name}`), size, name);
    const structs = ['header', 'policy', 'label', 'rule', 'source', 'node'];
    structs.forEach((s, i) =>
      assert.equal(num(`sizeof.${s}`), sizes[i]?.[1], `sizeof(struct rt_table_${s})`),
    );
    assert.equal(num('minBuckets'), MIN_BUCKETS);
    assert.equal(num('sectionAlign'), SECTION_ALIGN);
    assert.equal(num('magicSize'), MAGIC.length);
    assert.equal(BigInt(`0x${c['fnv.offset'] ?? ''}`), FNV_OFFSET);
    assert.equal(BigInt(`0x${c['fnv.prime'] ?? ''}`), FNV_PRIME);
  });

  const records: [string, Record<string, number>][] = [
    ['header', Header],
    ['policy', PolicyField],
    ['label', LabelField],
    ['rule', RuleField],
    ['source', SourceField],
    ['node', NodeField],
  ];
  for (const [record, fields] of records) {
    it(`has the same ${record} field offsets`, () => {
      for (const [field, offset] of Object.entries(fields))
        assert.equal(num(`${record}.${field}`), offset, `${record}.${field}`);
    });
  }

  it('has the same codes', () => {
    assert.equal(num('class.PROCESS'), CLASS_CODES[Operation.Process]);
    assert.equal(num('class.FILE'), CLASS_CODES[Operation.File]);
    assert.equal(num('class.NETWORK'), CLASS_CODES[Operation.Network]);
    assert.equal(num('class.CAPABILITIES'), CLASS_CODES[Operation.Capabilities]);
    assert.equal(num('action.ALLOW'), ACTION_CODES[Action.Allow]);
    assert.equal(num('action.AUDIT'), ACTION_CODES[Action.Audit]);
    assert.equal(num('action.BLOCK'), ACTION_CODES[Action.Block]);
    for (const [name, code] of Object.entries(MatcherCode))
      assert.equal(num(`matcher.${name.toUpperCase()}`), code, `matcher ${name}`);
    const flagNames: Record<string, string> = {
      recursive: 'RECURSIVE',
      readOnly: 'READONLY',
      ownerOnly: 'OWNERONLY',
      pts: 'PTS',
      hasArgs: 'ARGS',
    };
    for (const [name, bit] of Object.entries(RuleFlag))
      assert.equal(num(`flag.${flagNames[name]}`), bit, name);
    assert.equal(num('label.op.EQUALS'), LabelOp.equals);
    assert.equal(num('label.op.IN'), LabelOp.in);
    assert.equal(num('label.op.NOT_IN'), LabelOp.notIn);
    assert.equal(num('source.kind.PATH'), SourceCode.path);
    assert.equal(num('source.kind.DIRECTORY'), SourceCode.directory);
    assert.equal(num('policy.kind.RUNTIME'), POLICY_KIND_CODES.RuntimePolicy);
    assert.equal(num('policy.kind.HOST'), POLICY_KIND_CODES.RuntimeHostPolicy);
    const nodeNames: Record<string, string> = {
      path: 'PATH',
      execname: 'EXECNAME',
      directory: 'DIR',
      patternDirectory: 'PATTERN_DIR',
      protocol: 'PROTOCOL',
      capability: 'CAPABILITY',
      allowSourcePath: 'ALLOW_SOURCE_PATH',
      allowSourceDirectory: 'ALLOW_SOURCE_DIR',
      address: 'ADDRESS',
      allowAddressSourcePath: 'ALLOW_ADDRESS_SOURCE_PATH',
      allowAddressSourceDirectory: 'ALLOW_ADDRESS_SOURCE_DIR',
    };
    for (const [name, kind] of Object.entries(NodeKind))
      assert.equal(num(`node.kind.${nodeNames[name]}`), kind, `node kind ${name}`);
    assert.equal(num('allowAddressBit'), ALLOW_ADDRESS_BIT);
    for (const [name, n] of Object.entries(IP_PROTOCOL_NUMBERS))
      assert.equal(num(`ipproto.${name.toUpperCase()}`), n, `IP protocol ${name}`);
  });
});
