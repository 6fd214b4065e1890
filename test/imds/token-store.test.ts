// Token store, listen addresses and the error page as pure units (manual clock).
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { createManualClock } from '../../imds/clock.js';
import { renderErrorPage, formatStatusLine } from '../../imds/error-page.js';
import { formatListenAddress, parseListenAddress } from '../../compiler/net/listen-address.js';
import { parseTokenTtl } from '../../imds/metadata-app.js';
import { createTokenStore } from '../../imds/token-store.js';

describe('imds token store', () => {
  it('a token is valid strictly before issue time + TTL', () => {
    const clock = createManualClock(1000);
    const store = createTokenStore({ clock, maxTokens: 10 });
    const t = store.issue(2);
    assert.equal(store.remainingSeconds(t), 2);
    clock.set(2999);
    assert.ok(store.isValid(t));
    clock.set(3000);
    assert.ok(!store.isValid(t));
    assert.equal(store.remainingSeconds(t), 0);
  });
  it('stays within maxTokens: expired tokens go first, then the oldest live ones', () => {
    const clock = createManualClock(0);
    const store = createTokenStore({ clock, maxTokens: 3 });
    const short = store.issue(1);
    const a = store.issue(100);
    const b = store.issue(100);
    clock.advance(1000);
    const c = store.issue(100);
    assert.equal(store.size(), 3);
    assert.ok(!store.isValid(short));
    assert.ok(store.isValid(a) && store.isValid(b) && store.isValid(c));
    const d = store.issue(100);
    assert.equal(store.size(), 3);
    assert.ok(!store.isValid(a), 'the oldest live token was evicted');
    assert.ok(store.isValid(b) && store.isValid(c) && store.isValid(d));
  });
  it('tokens are URL-safe and unguessable (56 chars of base64url from 42 random bytes)', () => {
    const store = createTokenStore({ clock: createManualClock(0), maxTokens: 1000 });
    const tokens = new Set(Array.from({ length: 200 }, () => store.issue(10)));
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
