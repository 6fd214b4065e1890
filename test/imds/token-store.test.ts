// Token store, listen addresses and the error page as pure units (manual clock).
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { createManualClock } from '../../imds/clock.js';
import { renderErrorPage, formatStatusLine } from '../../imds/error-page.js';
import { formatListenAddress, parseListenAddress } from '../../compiler/net/listen-address.js';
import { parseTokenTtl } from '../../imds/metadata-app.js';
import { createTokenStore, type TokenStore } from '../../imds/token-store.js';

function issue(store: TokenStore, ttl: number, client = 'a'): string {
  const r = store.issue(ttl, client);
  assert.ok(r.ok, 'token refused');
  return r.token;
}

describe('imds token store', () => {
  it('a token is valid strictly before issue time + TTL', () => {
    const clock = createManualClock(1000);
    const store = createTokenStore({ clock, maxTokens: 10 });
    const t = issue(store, 2);
    assert.equal(store.remainingSeconds(t), 2);
    clock.set(2999);
    assert.ok(store.isValid(t));
    clock.set(3000);
    assert.ok(!store.isValid(t));
    assert.equal(store.remainingSeconds(t), 0);
  });
  it("one client past its bound loses its own oldest token, never another client's", () => {
    const clock = createManualClock(0);
    const store = createTokenStore({ clock, maxTokens: 10, maxTokensPerClient: 3 });
    const other = issue(store, 100, 'b');
    const short = issue(store, 1, 'a');
    const a1 = issue(store, 100, 'a');
    const a2 = issue(store, 100, 'a');
    clock.advance(1000);
    const a3 = issue(store, 100, 'a');
    assert.ok(!store.isValid(short), 'the expired token went first');
    assert.ok(store.isValid(a1) && store.isValid(a2) && store.isValid(a3));
    const a4 = issue(store, 100, 'a');
    assert.ok(!store.isValid(a1), "the client's oldest live token was evicted");
    assert.ok(store.isValid(a2) && store.isValid(a3) && store.isValid(a4));
    assert.equal(store.sizeOf('a'), 3);
    assert.ok(store.isValid(other), "the other client's token is untouched");
  });
  it('a full instance refuses new tokens (429 upstream) instead of evicting live ones; expired ones make room', () => {
    const clock = createManualClock(0);
    const store = createTokenStore({ clock, maxTokens: 3, maxTokensPerClient: 2 });
    const b = issue(store, 100, 'b');
    const c1 = issue(store, 1, 'c');
    const d = issue(store, 100, 'd');
    assert.deepEqual(store.issue(100, 'e'), { ok: false, reason: 'instance-full' });
    assert.ok(store.isValid(b) && store.isValid(c1) && store.isValid(d));
    clock.advance(1000);
    assert.ok(store.issue(100, 'e').ok, 'the expired token made room');
    assert.ok(store.isValid(b) && store.isValid(d));
  });
  it("10 001 token requests from one client (bounded count) leave every other client's live tokens valid", () => {
    const clock = createManualClock(0);
    const store = createTokenStore({ clock, maxTokens: 10000, maxTokensPerClient: 1000 });
    const others = Array.from({ length: 50 }, (_, i) => issue(store, 21600, `10.0.0.${i}`));
    let refused = 0;
    for (let i = 0; i < 10001; i++) if (!store.issue(21600, '10.9.9.9').ok) refused++;
    assert.equal(refused, 0, 'the flooding client only recycles its own tokens');
    assert.equal(store.sizeOf('10.9.9.9'), 1000);
    for (const t of others) assert.ok(store.isValid(t));
    assert.ok(store.size() <= 10000);
  });
  it('tokens are URL-safe and unguessable (56 chars of base64url from 42 random bytes)', () => {
    const store = createTokenStore({ clock: createManualClock(0), maxTokens: 1000 });
    const tokens = new Set(Array.from({ length: 200 }, () => issue(store, 10)));
    assert.equal(tokens.size, 200);
    for (const t of tokens) assert.match(t, /^[A-Za-z0-9_-]{56}$/);
  });
});

describe('imds token TTL header', () => {
  const cases: [string | string[] | undefined, number | undefined][] = [
    ['1', 1],
    ['21600', 21600],
    ['0060', 60],
    ['0', undefined],
    ['21601', undefined],
    ['-5', undefined],
    ['+5', undefined],
    ['5.0', undefined],
    ['1e3', undefined],
    [' 5', undefined],
    ['', undefined],
    ['60, 60', undefined],
    [['60', '60'], undefined],
    [undefined, undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${String(expected)}`, () => assert.equal(parseTokenTtl(input), expected));
  }
});

describe('imds listen addresses', () => {
  const good: [string, string, number][] = [
    ['169.254.169.254:80', '169.254.169.254', 80],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['[::1]:8080', '::1', 8080],
  ];
  for (const [text, host, port] of good) {
    it(`${text} parses and formats back`, () => {
      const r = parseListenAddress(text);
      assert.ok(r.ok);
      assert.deepEqual(r.value, { host, port });
      assert.equal(formatListenAddress(r.value), text);
    });
  }
  for (const bad of [
    'localhost:80',
    '127.0.0.1',
    '127.0.0.1:65536',
    '::1:80',
    '[127.0.0.1]:80',
    '1.2.3.4:x',
    '',
  ]) {
    it(`${JSON.stringify(bad)} is refused with a reason`, () => {
      const r = parseListenAddress(bad);
      assert.ok(!r.ok && r.error.length > 0);
    });
  }
});

describe('imds error page', () => {
  for (const [status, line] of [
    [400, '400 - Bad Request'],
    [401, '401 - Unauthorized'],
    [403, '403 - Forbidden'],
    [404, '404 - Not Found'],
    [405, '405 - Method Not Allowed'],
  ] as const) {
    it(`${status}: <title>${line}</title>`, () => {
      assert.equal(formatStatusLine(status), line);
      assert.ok(renderErrorPage(status).includes(`<title>${line}</title>`));
    });
  }
});
