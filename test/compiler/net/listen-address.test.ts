// The one listen-address parser of the server CLIs: every accepted form and every refusal, table-driven.
import assert from 'node:assert/strict';
import {
  formatListenAddress,
  parseListenAddress,
  parseSocketAddress,
  type ListenAddressOptions,
} from '../../../compiler/net/listen-address.js';

const ENFORCER: ListenAddressOptions = { defaultHost: '127.0.0.1', hostNames: true };

const cases: { text: string; options?: ListenAddressOptions; value?: object; error?: RegExp }[] = [
  { text: '127.0.0.1:9180', value: { host: '127.0.0.1', port: 9180 } },
  { text: '0.0.0.0:0', value: { host: '0.0.0.0', port: 0 } },
  { text: '[::1]:8080', value: { host: '::1', port: 8080 } },
  { text: '[fe80::1%eth0]:80', value: { host: 'fe80::1%eth0', port: 80 } },
  { text: '169.254.169.254:80', value: { host: '169.254.169.254', port: 80 } },
  { text: '127.0.0.1:65536', error: /port 65536 is above 65535/ },
  { text: '127.0.0.1:123456', error: /is not host:port/ },
  { text: 'localhost', error: /"localhost" is not host:port/ },
  { text: 'nowhere', error: /"nowhere" is not host:port/ },
  { text: 'localhost:80', error: /"localhost" is not an IP address/ },
  { text: '::1:80', error: /is not host:port/ },
  { text: '[1.2.3.4]:80', error: /in brackets must be IPv6/ },
  { text: '4280', error: /is not host:port/ },
  { text: '', error: /is not host:port/ },
  { text: '4280', options: ENFORCER, value: { host: '127.0.0.1', port: 4280 } },
  { text: 'localhost:4280', options: ENFORCER, value: { host: 'localhost', port: 4280 } },
  {
    text: 'enforcer.kube-system.svc:4280',
    options: ENFORCER,
    value: { host: 'enforcer.kube-system.svc', port: 4280 },
  },
  { text: '[localhost]:4280', options: ENFORCER, error: /is not an IP address/ },
  { text: '-bad-:4280', options: ENFORCER, error: /is not an IP address/ },
  { text: '99999', options: ENFORCER, error: /above 65535/ },
  { text: 'x', options: ENFORCER, error: /is not host:port or a port/ },
];

describe('listen addresses (compiler/net/listen-address.ts)', () => {
  for (const c of cases) {
    it(`${JSON.stringify(c.text)}${c.options === undefined ? '' : ' (port only and host names allowed)'}`, () => {
      const r = parseListenAddress(c.text, c.options);
      if (c.value !== undefined) {
        assert.deepEqual(r, { ok: true, value: c.value });
      } else {
        assert.equal(r.ok, false);
        if (!r.ok) assert.match(r.error, c.error ?? /./);
      }
    });
  }

  const socketCases: { text: string; value?: object; error?: RegExp }[] = [
    { text: 'unix:/run/rtctl/alerts.sock', value: { path: '/run/rtctl/alerts.sock' } },
    { text: 'unix:run/alerts.sock', error: /must be absolute/ },
    { text: `unix:/${'a'.repeat(107)}`, error: /longer than 107 bytes/ },
    { text: 'unix:/a\0b', error: /NUL/ },
    { text: '127.0.0.1:4280', value: { host: '127.0.0.1', port: 4280 } },
  ];
  for (const c of socketCases) {
    it(`socket address ${JSON.stringify(c.text)}`, () => {
      const r = parseSocketAddress(c.text);
      if (c.value !== undefined) assert.deepEqual(r, { ok: true, value: c.value });
      else {
        assert.equal(r.ok, false);
        if (!r.ok) assert.match(r.error, c.error ?? /./);
      }
    });
  }

  it('formats every form back to the text it parses from', () => {
    for (const text of ['127.0.0.1:80', '[::1]:8080', 'unix:/run/x.sock']) {
      const r = parseSocketAddress(text);
      assert.ok(r.ok);
      if (r.ok) assert.equal(formatListenAddress(r.value), text);
    }
  });
});
