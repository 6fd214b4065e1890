// The pre-parse shape pass (webhook/json-shape.ts) reads the envelope fields of a body over its bounds, so the
// denial can name the review: the uid and apiVersion it reads are what JSON.parse reads, for any string (plain,
// escaped, non-ASCII, bytes that are not UTF-8), whichever path it takes (plain bytes or a JSON.parse of the token).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import '../support/property-seed.js';
import { measureJsonShape } from '../../webhook/json-shape.js';

const LIMITS = { maxDepth: 4, maxContainers: 1000, maxKeysPerObject: 100, maxKeys: 1000, maxValues: 1000 };

/** A review whose object nests deeper than LIMITS allow, with the given envelope tokens. */
function overDeep(apiVersionToken: Buffer, uidToken: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('{"apiVersion":'),
    apiVersionToken,
    Buffer.from(',"request":{"uid":'),
    uidToken,
    Buffer.from(',"object":{"a":{"b":{"c":{"d":{}}}}}}}'),
  ]);
}

describe('webhook JSON shape pass: envelope fields', () => {
  it('reads the uid and apiVersion of a body over its bounds as JSON.parse does (fast-check, fixed seed)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        (uid, apiVersion) => {
          const shape = measureJsonShape(
            overDeep(Buffer.from(JSON.stringify(apiVersion)), Buffer.from(JSON.stringify(uid))),
            LIMITS,
          );
          assert.equal(shape.ok, false);
          if (shape.ok) return;
          assert.equal(shape.uid, uid);
          assert.equal(shape.apiVersion, apiVersion);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads raw bytes inside a token (control bytes, invalid UTF-8) as JSON.parse of the same token does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 30 }), (raw) => {
        const bytes = Buffer.from(raw.filter((b) => b !== 0x22 && b !== 0x5c));
        const token = Buffer.concat([Buffer.from('"'), bytes, Buffer.from('"')]);
        let expected: string | undefined;
        try {
          const v: unknown = JSON.parse(token.toString('utf8'));
          expected = typeof v === 'string' ? v : undefined;
        } catch {
          expected = undefined;
        }
        const shape = measureJsonShape(overDeep(Buffer.from('"admission.k8s.io/v1"'), token), LIMITS);
        assert.equal(shape.ok, false);
        if (shape.ok) return;
        assert.equal(shape.uid, expected);
      }),
      { numRuns: 500 },
    );
  });
});
