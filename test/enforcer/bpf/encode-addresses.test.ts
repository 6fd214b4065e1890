// Address rules for the BPF-LSM plane (enforcer/bpf/encode-addresses.ts): the rt_addr entries agree with
// rtctl-addr-maps.h; the longest block containing a destination (what the kernel's LPM trie returns) lists
// exactly the address rules whose blocks hold it, in precedence order (generated rule sets, fixed seed);
// Allow address rules with fromSource put only connects and sends in least-permissive mode; limits are
// errors with a code; event resources decode to the alert's address and port.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import '../../support/property-seed.js';
import { isAddressInCidr, maskAddress, parseCidr, parseIpAddress } from '../../../compiler/net/cidr.js';
import { buildRuleTableImage } from '../../../compiler/rule-table/build-rule-table.js';
import { MatcherCode } from '../../../compiler/rule-table/rule-table-format.js';
import type { RuleTableRecords } from '../../../compiler/rule-table/rule-table-records.js';
import {
  AddrLimit,
  RT_ADDR_KEY_SIZE,
  RT_ADDR_REF_SIZE,
  RT_ADDR_VAL_SIZE,
  RT_ADDR_WL_SIZE,
  decodeDestination,
  getAddrProtoCode,
} from '../../../enforcer/bpf/encode-addresses.js';
import { encodeState, type KeyedWorkload } from '../../../enforcer/bpf/encode-state.js';
import { MapLimit, WorkloadKeyKind } from '../../../enforcer/bpf/map-layout.js';
import { NetProto } from '../../../enforcer/network/net-map-layout.js';
import { arbAddressScenario } from '../../compiler/decide/arbitrary-rule-set.js';
import { Action, address, makePodPolicy, srcPath } from '../../compiler/decide/rule-set-builder.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';

const BPF_DIR = resolve(fileURLToPath(import.meta.url), '../../../../enforcer/bpf');
const LAYOUT_DIR = resolve(fileURLToPath(import.meta.url), '../../../../compiler/rule-table');

const workload = (policies: number[]): KeyedWorkload => ({
  name: 'w',
  keyKind: WorkloadKeyKind.Cgroup,
  keyId: 77n,
  policies,
  postures: { file: 'audit', network: 'block', capabilities: 'audit' },
});

/** One decoded rt_addr entry. */
interface Entry {
  slot: number;
  family: number;
  prefix: number;
  network: Uint8Array;
  refs: { rule: number; proto: number; ports: number[] }[];
}

function decodeEntries(entries: readonly (readonly [string, string, string])[]): Entry[] {
  return entries
    .filter((e) => e[0] === 'rt_addr')
    .map(([, k, v]) => {
      const key = Buffer.from(k, 'hex');
      const value = Buffer.from(v, 'hex');
      assert.equal(key.length, RT_ADDR_KEY_SIZE);
      assert.equal(value.length, RT_ADDR_VAL_SIZE);
      const family = key.readUInt8(5);
      const count = value.readUInt32LE(0);
      const refs = Array.from({ length: count }, (_, i) => {
        const at = 8 + i * RT_ADDR_REF_SIZE;
        const nports = value.readUInt8(at + 5);
        return {
          rule: value.readUInt32LE(at),
          proto: value.readUInt8(at + 4),
          ports: Array.from({ length: nports }, (_, j) => value.readUInt16LE(at + 6 + 2 * j)),
        };
      });
      return {
        slot: key.readUInt8(4),
        family,
        prefix: key.readUInt32LE(0) - AddrLimit.keyBits,
        network: Uint8Array.from(key.subarray(8, 8 + (family === 4 ? 4 : 16))),
        refs,
      };
    });
}

/** What the kernel's LPM lookup returns for a destination: the longest block of its family holding it. */
function longestMatch(
  entries: readonly Entry[],
  slot: number,
  family: number,
  bytes: Uint8Array,
): Entry | undefined {
  let best: Entry | undefined;
  for (const e of entries) {
    if (e.slot !== slot || e.family !== family) continue;
    if (!maskAddress(bytes, e.prefix).every((b, i) => b === e.network[i])) continue;
    if (best === undefined || e.prefix > best.prefix) best = e;
  }
  return best;
}

describe('BPF-LSM address rules: the rt_addr maps', function () {
  this.timeout(60_000);

  it('has the sizes and limits of rtctl-addr-maps.h', function () {
    requirePrereqs(this, [[hasCommand('cc'), 'a C compiler (cc)']]);
    const exprs: Record<string, string> = {
      key: 'sizeof(struct rt_addr_key)',
      ref: 'sizeof(struct rt_addr_ref)',
      val: 'sizeof(struct rt_addr_val)',
      wl: 'sizeof(struct rt_addr_wl)',
      blocks: 'RT_MAX_ADDR_BLOCKS',
      refs: 'RT_MAX_ADDR_REFS',
      ports: 'RT_MAX_ADDR_PORTS',
      keyBits: 'RT_ADDR_KEY_BITS',
      resourceLength: 'RT_ADDR_RESOURCE_LEN',
      tcp: 'RT_NET_TCP',
      udp: 'RT_NET_UDP',
      icmp: 'RT_NET_ICMP',
      raw: 'RT_NET_RAW',
      rawIcmp: 'RT_NET_RAW_ICMP',
      never: 'RT_NET_NEVER',
      slotAt: '__builtin_offsetof(struct rt_addr_key, slot)',
      addrAt: '__builtin_offsetof(struct rt_addr_key, addr)',
      portsAt: '__builtin_offsetof(struct rt_addr_ref, ports)',
      refsAt: '__builtin_offsetof(struct rt_addr_val, refs)',
    };
    const work = mkdtempSync(join(tmpdir(), 'rtctl-addrlayout-'));
    let c: Record<string, number>;
    try {
      writeFileSync(
        join(work, 'p.c'),
        [
          '#include <stdio.h>',
          '#include <linux/types.h>',
          '#include "rtctl-addr-maps.h"',
          'int main(void) {',
          ...Object.entries(exprs).map(
            ([k, e], i) =>
              `  printf("%s\\"${k}\\":%llu", ${i === 0 ? '"{"' : '","'}, (unsigned long long)(${e}));`,
          ),
          '  printf("}\\n");',
          '  return 0;',
          '}',
        ].join('\n'),
      );
      execFileSync('cc', [
        '-std=gnu11',
        '-Wall',
        '-Werror',
        `-I${BPF_DIR}`,
        `-I${LAYOUT_DIR}`,
        '-o',
        join(work, 'p'),
        join(work, 'p.c'),
      ]);
      c = JSON.parse(execFileSync(join(work, 'p'), { encoding: 'utf8' })) as Record<string, number>;
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    assert.deepEqual(
      { key: c['key'], ref: c['ref'], val: c['val'], wl: c['wl'] },
      { key: RT_ADDR_KEY_SIZE, ref: RT_ADDR_REF_SIZE, val: RT_ADDR_VAL_SIZE, wl: RT_ADDR_WL_SIZE },
    );
    for (const [k, v] of Object.entries(AddrLimit)) assert.equal(c[k], v, k);
    for (const name of ['tcp', 'udp', 'icmp', 'raw', 'rawIcmp', 'never'] as const)
      assert.equal(c[name], NetProto[name], name);
    assert.deepEqual([c['slotAt'], c['addrAt'], c['portsAt'], c['refsAt']], [4, 8, 6, 8]);
  });

  it('lists for each block every address rule whose block holds it, ascending (the trie answers with the longest)', () => {
    let destinations = 0;
    let matched = 0;
    let nested = 0;
    fc.assert(
      fc.property(arbAddressScenario, ({ ruleSet, operations }) => {
        const records = buildRuleTableImage(ruleSet).records;
        const r = encodeState(records, 1, [workload([0])]);
        assert.ok(r.ok, r.ok ? '' : r.error.message);
        const entries = decodeEntries(r.state.entries);
        for (const op of operations) {
          if (op.address === undefined) continue;
          const parsed = parseIpAddress(op.address);
          if (!parsed.ok) continue;
          destinations++;
          const expected = records.rules.flatMap((rule, index) => {
            if (rule.matcher !== MatcherCode.address) return [];
            const block = parseCidr(rule.value);
            return block.ok && isAddressInCidr(parsed.value, block.value) ? [index] : [];
          });
          const e = longestMatch(entries, 1, parsed.value.family, parsed.value.bytes);
          assert.deepEqual(e?.refs.map((x) => x.rule) ?? [], expected, op.address);
          if (expected.length > 0) matched++;
          if (new Set(expected.map((i) => records.rules[i]?.value)).size > 1) nested++;
          for (const ref of e?.refs ?? []) {
            const rule = records.rules[ref.rule];
            assert.ok(rule !== undefined);
            assert.deepEqual(ref.ports, rule.ports);
            assert.equal(ref.proto, getAddrProtoCode(rule.protocol));
          }
        }
        // Nothing of slot 0 is written for slot 1.
        assert.ok(entries.every((x) => x.slot === 1));
      }),
      { numRuns: 300 },
    );
    assert.ok(destinations > 200 && matched > 100 && nested > 10, `${destinations} / ${matched} / ${nested}`);
  });

  it('names the sockets an address rule is limited to with the cgroup plane codes (sctp and icmpv6 never)', () => {
    assert.deepEqual([0, 6, 17, 1, 58, 132].map(getAddrProtoCode), [
      0,
      NetProto.tcp,
      NetProto.udp,
      NetProto.icmp,
      NetProto.never,
      NetProto.never,
    ]);
  });

  it('puts Allow address rules with fromSource in rt_addr_wl, not in the least-permissive sources of socket creation', () => {
    const policy = makePodPolicy('p', [
      { matcher: address('10.0.0.0/8'), action: Action.Allow, fromSource: [srcPath('/usr/bin/curl')] },
      { matcher: address('10.1.0.0/16'), action: Action.Block },
    ]);
    const records: RuleTableRecords = buildRuleTableImage({ policies: [policy] }).records;
    const r = encodeState(records, 0, [workload([0])]);
    assert.ok(r.ok);
    const wl = r.state.entries.filter((e) => e[0] === 'rt_addr_wl');
    assert.equal(wl.length, 1);
    assert.equal(wl[0]?.[1], '00000000', 'slot 0, workload 0');
    assert.equal(Buffer.from(wl[0]?.[2] ?? '', 'hex').readUInt8(0), 1, 'source id 0 (curl) is set');
    const w = Buffer.from(r.state.entries.find((e) => e[0] === 'rt_workloads')?.[2] ?? '', 'hex');
    // lp_sources[Network] of rt_workload (offset 144 + 32 * 2) stays empty: sockets are not under the posture.
    assert.ok(w.subarray(144 + 64, 144 + 96).every((b) => b === 0));
    assert.equal(w.readUInt8(9), 1, 'has_sources: the actor is looked up');
    // Slot 1 indexes the workload after the slot's workloads.
    const r1 = encodeState(records, 1, [workload([0])]);
    assert.ok(r1.ok);
    assert.equal(
      r1.state.entries.find((e) => e[0] === 'rt_addr_wl')?.[1],
      Buffer.from(Uint32Array.of(MapLimit.maxWorkloads).buffer).toString('hex'),
    );
  });

  it('refuses with BPF_LIMIT what the maps cannot hold: too many rules over one block, too many ports', () => {
    const many = Array.from({ length: AddrLimit.refs + 1 }, (_, i) =>
      makePodPolicy(`p${i}`, [{ matcher: address('169.254.169.254/32'), action: Action.Block }], {
        namespace: `ns${i}`,
      }),
    );
    const r = encodeState(buildRuleTableImage({ policies: many }).records, 0, [workload([0])]);
    assert.equal(r.ok, false);
    assert.ok(
      !r.ok &&
        r.error.code === 'BPF_LIMIT' &&
        /65 address rules apply to destinations in 169\.254\.169\.254\/32/.test(r.error.message),
    );
    const ports = makePodPolicy('p', [
      { matcher: address('10.0.0.0/8', [1, 2, 3, 4, 5, 6, 7, 8, 9]), action: Action.Block },
    ]);
    const rp = encodeState(buildRuleTableImage({ policies: [ports] }).records, 0, [workload([0])]);
    assert.ok(!rp.ok && rp.error.code === 'BPF_LIMIT' && /9 ports on 10\.0\.0\.0\/8/.test(rp.error.message));
  });

  it('decodes the destination the hooks write into the alert resource', () => {
    const v4 = decodeDestination(`@4a9fea9fe${'0'.repeat(24)}0050tcp`);
    assert.deepEqual(v4, { family: 4, bytes: Uint8Array.of(169, 254, 169, 254), port: 80, protocol: 'tcp' });
    const v6 = decodeDestination('@6fd000ec20000000000000000000002540035udp');
    assert.equal(v6?.family, 6);
    assert.equal(Buffer.from(v6?.bytes ?? []).toString('hex'), 'fd000ec2000000000000000000000254');
    assert.equal(v6?.port, 53);
    for (const other of ['tcp', '@4zz', '', `@5${'0'.repeat(36)}tcp`])
      assert.equal(decodeDestination(other), undefined, other);
  });
});
