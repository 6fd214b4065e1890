// The network plane's map layout has one C header (enforcer/network/rtctl-net-maps.h) and one TypeScript
// module (net-map-layout.ts). This test compiles a program against the header that prints the sizes and
// constants, and compares them with the TypeScript numbers; and decodes an event the encoder's layout places.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  NET_CLASS_PTS,
  NetKind,
  NetLimit,
  NetOp,
  NetProto,
  NetSize,
  NetWorkloadFlag,
} from '../../../enforcer/network/net-map-layout.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';

const HEADER_DIR = resolve(fileURLToPath(import.meta.url), '../../../../enforcer/network');

const EXPRESSIONS: Record<string, string> = {
  'size.workload': 'sizeof(struct rtn_workload)',
  'size.protoKey': 'sizeof(struct rtn_proto_key)',
  'size.verdict': 'sizeof(struct rtn_verdict)',
  'size.addrKey': 'sizeof(struct rtn_addr_key)',
  'size.candidate': 'sizeof(struct rtn_candidate)',
  'size.addrValue': 'sizeof(struct rtn_addr_value)',
  'size.event': 'sizeof(struct rtn_event)',
  'size.config': 'sizeof(struct rtn_config)',
  'size.srcKey': 'sizeof(struct rtn_src_key)',
  'size.srcValue': 'sizeof(struct rtn_src_value)',
  'size.eventExe': 'sizeof(struct rtn_event_exe)',
  'limit.sources': 'RTN_MAX_SOURCES',
  'limit.sourceBytes': 'RTN_SRC_MAX',
  'flag.sources': 'RTN_WL_SOURCES',
  'flag.pts': 'RTN_WL_PTS',
  'cls.pts': 'RTN_CLS_PTS',
  'workload.flags': '__builtin_offsetof(struct rtn_workload, flags)',
  'protoKey.cls': '__builtin_offsetof(struct rtn_proto_key, cls)',
  'candidate.pts': '__builtin_offsetof(struct rtn_candidate, pts)',
  'candidate.sources': '__builtin_offsetof(struct rtn_candidate, sources)',
  'config.usernsIno': '__builtin_offsetof(struct rtn_config, userns_ino)',
  'config.pidnsCheck': '__builtin_offsetof(struct rtn_config, pidns_check)',
  'limit.workloads': 'RTN_MAX_WORKLOADS',
  'limit.prefixes': 'RTN_MAX_PREFIXES',
  'limit.candidates': 'RTN_MAX_CANDIDATES',
  'limit.ports': 'RTN_MAX_PORTS',
  'proto.tcp': 'RTN_PROTO_TCP',
  'proto.udp': 'RTN_PROTO_UDP',
  'proto.icmp': 'RTN_PROTO_ICMP',
  'proto.raw': 'RTN_PROTO_RAW',
  'proto.rawIcmp': 'RTN_PROTO_RAW_ICMP',
  'proto.never': 'RTN_PROTO_NEVER',
  'op.socket': 'RTN_OP_SOCKET',
  'op.connect': 'RTN_OP_CONNECT',
  'op.sendmsg': 'RTN_OP_SENDMSG',
  'kind.none': 'RTN_KIND_NONE',
  'kind.rule': 'RTN_KIND_RULE',
  'kind.posture': 'RTN_KIND_POSTURE',
  'event.comm': '__builtin_offsetof(struct rtn_event, comm)',
  'event.addr': '__builtin_offsetof(struct rtn_event, addr)',
  'event.port': '__builtin_offsetof(struct rtn_event, port)',
  'workload.prefix6': '__builtin_offsetof(struct rtn_workload, prefix6)',
};

describe('network plane map layout: the C header and the TypeScript constants agree', function () {
  this.timeout(60_000);
  let c: Record<string, number> = {};
  before(function () {
    requirePrereqs(this, [[hasCommand('cc'), 'a C compiler (cc)']]);
    const work = mkdtempSync(join(tmpdir(), 'rtctl-netlayout-'));
    try {
      const lines = Object.entries(EXPRESSIONS).map(
        ([k, e], i) =>
          `  printf("%s\\"${k}\\":%llu", ${i === 0 ? '""' : '","'}, (unsigned long long)(${e}));`,
      );
      writeFileSync(
        join(work, 'p.c'),
        [
          '#include <stdio.h>',
          '#include <linux/types.h>',
          '#include "rtctl-net-maps.h"',
          'int main(void) {',
          '  printf("{");',
          ...lines,
          '  printf("}\\n");',
          '  return 0;',
          '}',
        ].join('\n'),
      );
      execFileSync('cc', [
        '-std=gnu11',
        '-Wall',
        '-Werror',
        `-I${HEADER_DIR}`,
        '-o',
        join(work, 'p'),
        join(work, 'p.c'),
      ]);
      c = JSON.parse(execFileSync(join(work, 'p'), { encoding: 'utf8' })) as Record<string, number>;
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('has the same record sizes, limits and codes', () => {
    for (const [k, v] of Object.entries(NetSize)) assert.equal(c[`size.${k}`], v, k);
    for (const [k, v] of Object.entries(NetLimit)) assert.equal(c[`limit.${k}`], v, k);
    for (const [k, v] of Object.entries(NetProto)) assert.equal(c[`proto.${k}`], v, k);
    for (const [k, v] of Object.entries(NetOp)) assert.equal(c[`op.${k}`], v, k);
    for (const [k, v] of Object.entries(NetKind)) assert.equal(c[`kind.${k}`], v, k);
    for (const [k, v] of Object.entries(NetWorkloadFlag)) assert.equal(c[`flag.${k}`], v, k);
    assert.equal(c['cls.pts'], NET_CLASS_PTS);
    // Offsets the encoders of sources and terminals use.
    assert.equal(c['workload.flags'], 10, 'encodeWorkload writes flags at 10');
    assert.equal(c['protoKey.cls'], 8, 'encodeProtoKey writes cls at 8');
    assert.equal(c['candidate.pts'], 7, 'encodeAddrValue writes pts at 7');
    assert.equal(c['candidate.sources'], 24, 'encodeAddrValue writes sources at 24');
    // Offsets decodeEvent and encodeWorkload use.
    assert.equal(c['event.comm'], 56);
    assert.equal(c['event.addr'], 40);
    assert.equal(c['event.port'], 38);
    assert.equal(c['workload.prefix6'], 28);
    assert.equal(c['config.usernsIno'], 24, 'encodeConfig writes userns_ino at 24');
    assert.equal(c['config.pidnsCheck'], 32, 'encodeConfig writes pidns_check at 32');
  });
});
