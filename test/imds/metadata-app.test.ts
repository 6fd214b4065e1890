// The metadata service over real HTTP on loopback: every row of the seed's "Behavior by option setting" table,
// every endpoint of its endpoint table, every error status, token TTL bounds, expiry and reuse, and the
// credentials' shape and rotation (manual clock; no sleeping).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'mocha';
import { loadSocketTtl, type SocketTtl } from '../../imds/socket-ttl.js';
import { requirePrereqs } from '../support/prereq.js';
import { readTitle, startHarness, T0, type Harness, type WireResponse } from './support/harness.js';

const TOKEN = 'X-cloud-metadata-token';
const ROLE = 'rtctl-node-role';
const MAC = '0e:12:34:56:78:9a';
const CREDENTIAL_FIELDS = [
  'Code',
  'LastUpdated',
  'Type',
  'AccessKeyId',
  'SecretAccessKey',
  'Token',
  'Expiration',
];
const ROLE_INFO_FIELDS = ['Code', 'LastUpdated', 'InstanceProfileArn', 'InstanceProfileId'];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

type Options = Record<string, string | number>;

async function withHarness<T>(
  options: Options,
  run: (h: Harness) => Promise<T>,
  extra: Record<string, unknown> = {},
): Promise<T> {
  const h = await startHarness({}, { metadataOptions: options, ...extra });
  try {
    return await run(h);
  } finally {
    await h.close();
  }
}

function assertErrorPage(res: WireResponse, status: number, text: string): void {
  assert.equal(res.status, status, res.body);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.equal(readTitle(res.body), `${status} - ${text}`);
}

describe('imds metadata service: behavior by option setting (seed table)', () => {
  interface Row {
    options: Options;
    request: string;
    run: (h: Harness) => Promise<WireResponse[]>;
    expect: (responses: WireResponse[]) => void;
  }
  const served = (rs: WireResponse[]) => {
    for (const r of rs) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, 'i-0123456789abcdef0');
    }
  };
  const rows: Row[] = [
    {
      options: { httpEndpoint: 'disabled' },
      request: 'any metadata request → 403 Forbidden',
      run: async (h) => [
        await h.get('/latest/meta-data'),
        await h.get('/latest/meta-data/instance-id'),
        await h.get('/latest/user-data'),
        await h.get('/latest/meta-data/iam/security-credentials/rtctl-node-role'),
        await h.get('/latest/meta-data/no-such-entry'),
        await h.get('/'),
        await h.putToken('60'),
        await h.putToken(undefined),
        await h.get('/latest/meta-data/instance-id', { [TOKEN]: 'whatever' }),
      ],
      expect: (rs) => rs.forEach((r) => assertErrorPage(r, 403, 'Forbidden')),
    },
    {
      options: { httpEndpoint: 'enabled', httpTokens: 'optional' },
      request: 'GET without token → served (v1)',
      run: async (h) => [await h.get('/latest/meta-data/instance-id')],
      expect: served,
    },
    {
      options: { httpEndpoint: 'enabled', httpTokens: 'optional' },
      request: 'GET with valid token → served (v2)',
      run: async (h) => [await h.get('/latest/meta-data/instance-id', { [TOKEN]: await h.token(60) })],
      expect: served,
    },
    {
      options: { httpEndpoint: 'enabled', httpTokens: 'required' },
      request: 'GET without token → 401 Unauthorized',
      run: async (h) => [
        await h.get('/latest/meta-data/instance-id'),
        await h.get('/latest/meta-data'),
        await h.get('/latest/user-data'),
      ],
      expect: (rs) => rs.forEach((r) => assertErrorPage(r, 401, 'Unauthorized')),
    },
    {
      options: { httpEndpoint: 'enabled', httpTokens: 'required' },
      request: 'GET with valid token → served',
      run: async (h) => [await h.get('/latest/meta-data/instance-id', { [TOKEN]: await h.token(60) })],
      expect: served,
    },
  ];
  for (const row of rows) {
    it(`${JSON.stringify(row.options)}: ${row.request}`, async () => {
      await withHarness(row.options, async (h) => row.expect(await row.run(h)));
    });
  }

  describe('hop-limit rows (socket TTL read back from the kernel; the routed hop itself is in hop-limit-netns.test.ts)', () => {
    let real: SocketTtl | undefined;
    before(function () {
      const loaded = loadSocketTtl();
      requirePrereqs(this, [
        [loaded.ok, `ip-ttl addon (needs cc and the Node headers): ${loaded.ok ? '' : loaded.error}`],
      ]);
      if (loaded.ok) real = loaded.ttl;
    });
    for (const hop of [1, 2]) {
      it(`{"httpTokens":"required","httpPutResponseHopLimit":${hop}}: token PUT → token issued on a connection with IP TTL ${hop}, then closed`, async () => {
        assert.ok(real);
        const seen: (number | undefined)[] = [];
        const base = real;
        const recording: SocketTtl = {
          set(socket: Socket, ttl: number) {
            const r = base.set(socket, ttl);
            seen.push(base.get(socket));
            return r;
          },
          get: (socket) => base.get(socket),
        };
        const h = await startHarness(
          {},
          { metadataOptions: { httpTokens: 'required', httpPutResponseHopLimit: hop } },
          recording,
        );
        try {
          const put = await h.putToken('60');
          assert.equal(put.status, 200);
          assert.equal(put.headers['connection'], 'close');
          assert.deepEqual(seen, [hop]);
          const get = await h.get('/latest/meta-data/instance-id', { [TOKEN]: put.body });
          assert.equal(get.status, 200);
          assert.deepEqual(seen, [hop], 'GETs leave the TTL alone');
        } finally {
          await h.close();
        }
      });
    }
  });
});

describe('imds metadata service: endpoints (seed table), with and without required tokens', () => {
  interface Endpoint {
    method: 'GET' | 'PUT';
    path: string;
    check: (res: WireResponse) => void;
  }
  const listing = (mustHave: string[]) => (res: WireResponse) => {
    const names = res.body.split('\n');
    for (const n of mustHave) assert.ok(names.includes(n), `listing lacks ${n}: ${res.body}`);
  };
  const exactly = (text: string) => (res: WireResponse) => assert.equal(res.body, text);
  const jsonFields = (fields: string[]) => (res: WireResponse) => {
    const doc = JSON.parse(res.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(doc), fields);
    assert.equal(doc['Code'], 'Success');
    assert.match(String(doc['LastUpdated']), ISO_UTC);
    for (const f of fields) assert.equal(typeof doc[f], 'string', f);
  };
  const endpoints: Endpoint[] = [
    { method: 'PUT', path: '/latest/api/token', check: (r) => assert.match(r.body, /^[A-Za-z0-9_-]{40,}$/) },
    { method: 'GET', path: '/latest/user-data', check: exactly('#!/bin/sh\necho hello from user data\n') },
    { method: 'GET', path: '/latest/meta-data', check: listing(['instance-id', 'placement/', 'iam/']) },
    { method: 'GET', path: '/latest/meta-data/', check: listing(['instance-id', 'placement/', 'iam/']) },
    {
      method: 'GET',
      path: '/latest/meta-data/placement/',
      check: exactly('availability-zone\navailability-zone-id\nregion'),
    },
    { method: 'GET', path: '/latest/meta-data/instance-type/', check: exactly('m5.large') },
    { method: 'GET', path: '/latest/meta-data/iam/info', check: jsonFields(ROLE_INFO_FIELDS) },
    {
      method: 'GET',
      path: `/latest/meta-data/iam/security-credentials/${ROLE}`,
      check: jsonFields(CREDENTIAL_FIELDS),
    },
    {
      method: 'GET',
      path: '/latest/meta-data/identity-credentials/compute/security-credentials/compute-instance',
      check: jsonFields(CREDENTIAL_FIELDS),
    },
  ];
  for (const tokens of ['optional', 'required'] as const) {
    for (const ep of endpoints) {
      it(`${ep.method} ${ep.path} (tokens ${tokens}${tokens === 'required' ? ', with token' : ', v1'})`, async () => {
        await withHarness({ httpTokens: tokens }, async (h) => {
          let res: WireResponse;
          if (ep.method === 'PUT') res = await h.putToken('300');
          else res = await h.get(ep.path, tokens === 'required' ? { [TOKEN]: await h.token(300) } : {});
          assert.equal(res.status, 200, res.body);
          assert.match(String(res.headers['content-type']), /^text\/plain/);
          ep.check(res);
        });
      });
    }
  }
});

describe('imds metadata service: the tree', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(
      {},
      { metadataOptions: { instanceMetadataTags: 'enabled' }, tags: { Name: 'web-1', team: 'sec' } },
    );
  });
  after(async () => h.close());

  const TOP_LEVEL = [
    'image-id',
    'image-launch-index',
    'image-manifest-path',
    'block-device-mapping/',
    'events/',
    'identity-credentials/',
    'metrics/',
    'network/',
    'placement/',
    'public-keys/',
    'services/',
    'hostname',
    'local-hostname',
    'public-hostname',
    'local-ipv4',
    'public-ipv4',
    'mac',
    'profile',
    'reservation-id',
    'security-groups',
    'instance-action',
    'instance-id',
    'instance-life-cycle',
    'instance-type',
    'autoscaling/',
    'iam/',
  ];
  it('lists every top-level entry of the seed table (directories with /, plus tags/ when tags are enabled), sorted, one per line', async () => {
    const res = await h.get('/latest/meta-data');
    const names = res.body.split('\n');
    assert.deepEqual([...names].sort(), names);
    assert.deepEqual(
      names.filter((n) => !TOP_LEVEL.includes(n)),
      ['tags/'],
    );
    for (const n of TOP_LEVEL) assert.ok(names.includes(n), n);
  });
  for (const entry of TOP_LEVEL) {
    it(`GET /latest/meta-data/${entry} answers 200 with a non-empty body`, async () => {
      const res = await h.get(`/latest/meta-data/${entry}`);
      assert.equal(res.status, 200);
      assert.notEqual(res.body, '');
      if (entry.endsWith('/')) {
        const bare = await h.get(`/latest/meta-data/${entry.slice(0, -1)}`);
        assert.equal(bare.body, res.body, 'a directory lists the same with or without the trailing slash');
      }
    });
  }
  const SUB_PATHS: [string, string][] = [
    ['placement/availability-zone', 'us-east-1a'],
    ['placement/region', 'us-east-1'],
    ['network/', 'interfaces/'],
    ['network/interfaces/macs/', `${MAC}/`],
    [`network/interfaces/macs/${MAC}/local-ipv4s`, '10.0.1.23'],
    [`network/interfaces/macs/${MAC}/mac`, MAC],
    [`network/interfaces/macs/${MAC}/ipv4-associations/203.0.113.10`, '10.0.1.23'],
    [`network/interfaces/macs/${MAC}/security-group-ids`, 'sg-0123456789abcdef0'],
    [`network/interfaces/macs/${MAC}/vpc-id`, 'vpc-0123456789abcdef0'],
    ['public-keys/', '0=rtctl-key'],
    ['public-keys/0/', 'openssh-key'],
    ['iam/', 'info\nsecurity-credentials/'],
    ['iam/security-credentials/', ROLE],
    ['identity-credentials/compute/security-credentials/', 'compute-instance'],
    ['events/', 'maintenance/'],
    ['events/maintenance/', 'history\nscheduled'],
    ['events/maintenance/scheduled', '[]'],
    ['instance-action', 'none'],
    ['instance-life-cycle', 'on-demand'],
    ['image-id', 'img-0abcdef1234567890'],
    ['services/partition', 'cloud'],
    ['autoscaling/target-lifecycle-state', 'InService'],
    ['block-device-mapping/root', '/dev/xvda'],
    ['tags/', 'instance/'],
    ['tags/instance', 'Name\nteam'],
    ['tags/instance/Name', 'web-1'],
    ['tags/instance/team', 'sec'],
  ];
  for (const [path, body] of SUB_PATHS) {
    it(`GET /latest/meta-data/${path} → ${JSON.stringify(body)}`, async () => {
      const res = await h.get(`/latest/meta-data/${path}`);
      assert.equal(res.status, 200);
      assert.equal(res.body, body);
    });
  }
  it('public-keys/0/openssh-key holds the configured key', async () => {
    const res = await h.get('/latest/meta-data/public-keys/0/openssh-key');
    assert.match(res.body, /^ssh-ed25519 \S+ rtctl-key$/);
  });
  it('tags/ is absent (404) while instance-metadata-tags is disabled, and appears once it is enabled', async () => {
    await withHarness({ instanceMetadataTags: 'disabled' }, async (g) => {
      assert.equal((await g.get('/latest/meta-data/tags/instance/Name')).status, 404);
      assert.ok(!(await g.get('/latest/meta-data')).body.split('\n').includes('tags/'));
      const m = await g.modify({ 'instance-id': 'i-0123456789abcdef0', 'instance-metadata-tags': 'enabled' });
      assert.equal(m.status, 200);
      g.scheduler.runAll();
      assert.equal((await g.get('/latest/meta-data/tags/instance/Name')).body, 'rtctl-instance');
    });
  });
  it('iam/ is absent when no role is attached', async () => {
    await withHarness(
      {},
      async (g) => {
        assert.ok(!(await g.get('/latest/meta-data')).body.split('\n').includes('iam/'));
        assert.equal((await g.get('/latest/meta-data/iam/info')).status, 404);
      },
      { role: null },
    );
  });
});

describe('imds metadata service: error statuses', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({}, { userData: null });
  });
  after(async () => h.close());
  const cases: { name: string; run: () => Promise<WireResponse>; status: number; text: string }[] = [
    {
      name: 'PUT token without the TTL header',
      run: () => h.putToken(undefined),
      status: 400,
      text: 'Bad Request',
    },
    { name: 'PUT token with TTL 0', run: () => h.putToken('0'), status: 400, text: 'Bad Request' },
    { name: 'PUT token with TTL 21601', run: () => h.putToken('21601'), status: 400, text: 'Bad Request' },
    { name: 'PUT token with TTL -1', run: () => h.putToken('-1'), status: 400, text: 'Bad Request' },
    { name: 'PUT token with TTL 1.5', run: () => h.putToken('1.5'), status: 400, text: 'Bad Request' },
    { name: 'PUT token with TTL abc', run: () => h.putToken('abc'), status: 400, text: 'Bad Request' },
    { name: 'PUT token with an empty TTL', run: () => h.putToken(''), status: 400, text: 'Bad Request' },
    {
      name: 'PUT token with TTL 99999999999',
      run: () => h.putToken('99999999999'),
      status: 400,
      text: 'Bad Request',
    },
    {
      name: 'PUT token through a proxy (X-Forwarded-For)',
      run: () => h.putToken('60', { 'X-Forwarded-For': '10.1.2.3' }),
      status: 403,
      text: 'Forbidden',
    },
    {
      name: 'GET with an unknown token (tokens optional)',
      run: () => h.get('/latest/meta-data', { [TOKEN]: 'forged' }),
      status: 401,
      text: 'Unauthorized',
    },
    {
      name: 'GET with an empty token header',
      run: () => h.get('/latest/meta-data', { [TOKEN]: '' }),
      status: 401,
      text: 'Unauthorized',
    },
    {
      name: 'GET an unknown entry',
      run: () => h.get('/latest/meta-data/no-such-entry'),
      status: 404,
      text: 'Not Found',
    },
    {
      name: 'GET below a plain value',
      run: () => h.get('/latest/meta-data/instance-id/x'),
      status: 404,
      text: 'Not Found',
    },
    {
      name: 'GET user-data when none is set',
      run: () => h.get('/latest/user-data'),
      status: 404,
      text: 'Not Found',
    },
    {
      name: 'GET an unknown version',
      run: () => h.get('/2009-04-04/meta-data'),
      status: 404,
      text: 'Not Found',
    },
    {
      name: 'GET a malformed percent-encoding',
      run: () => h.get('/latest/meta-data/%E0%A4%A'),
      status: 404,
      text: 'Not Found',
    },
    {
      name: 'GET * (asterisk-form request target)',
      run: () => import('./support/harness.js').then((m) => m.sendRequest(h.metadataUrl, 'GET', '*')),
      status: 400,
      text: 'Bad Request',
    },
    {
      name: 'GET an absolute-form request target',
      run: () =>
        import('./support/harness.js').then((m) =>
          m.sendRequest(h.metadataUrl, 'GET', 'http://169.254.169.254/latest/meta-data'),
        ),
      status: 400,
      text: 'Bad Request',
    },
    {
      name: 'GET the token path',
      run: () => h.get('/latest/api/token'),
      status: 405,
      text: 'Method Not Allowed',
    },
    {
      name: 'POST a metadata path',
      run: () =>
        import('./support/harness.js').then((m) => m.sendRequest(h.metadataUrl, 'POST', '/latest/meta-data')),
      status: 405,
      text: 'Method Not Allowed',
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.status} with <title>${c.status} - ${c.text}</title>`, async () => {
      assertErrorPage(await c.run(), c.status, c.text);
    });
  }
  it('the 401 page is an HTML document whose title is "401 - Unauthorized"', async () => {
    await withHarness({ httpTokens: 'required' }, async (g) => {
      const res = await g.get('/latest/meta-data');
      assertErrorPage(res, 401, 'Unauthorized');
      assert.match(res.body, /<html[^>]*>[\s\S]*<\/html>\s*$/);
      assert.match(res.body, /<h1>401 - Unauthorized<\/h1>/);
    });
  });
  it('the 403 page is an HTML document whose title is "403 - Forbidden"', async () => {
    await withHarness({ httpEndpoint: 'disabled' }, async (g) => {
      const res = await g.get('/latest/meta-data');
      assertErrorPage(res, 403, 'Forbidden');
      assert.match(res.body, /<html[^>]*>[\s\S]*<\/html>\s*$/);
    });
  });
});

describe('imds metadata service: tokens', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({}, { metadataOptions: { httpTokens: 'required' } });
  });
  after(async () => h.close());

  for (const ttl of [1, 21600]) {
    it(`accepts the TTL bound ${ttl} and echoes it in the TTL header`, async () => {
      const res = await h.putToken(String(ttl));
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-cloud-metadata-token-ttl-seconds'], String(ttl));
    });
  }
  it('a token is valid until its TTL and refused (401) from then on', async () => {
    h.clock.set(T0);
    const token = await h.token(60);
    h.clock.set(T0 + 59_999);
    assert.equal((await h.get('/latest/meta-data/instance-id', { [TOKEN]: token })).status, 200);
    h.clock.set(T0 + 60_000);
    assertErrorPage(await h.get('/latest/meta-data/instance-id', { [TOKEN]: token }), 401, 'Unauthorized');
    h.clock.set(T0);
  });
  it('a 1-second token expires after 1 second', async () => {
    h.clock.set(T0);
    const token = await h.token(1);
    assert.equal((await h.get('/latest/meta-data/mac', { [TOKEN]: token })).status, 200);
    h.clock.advance(1000);
    assert.equal((await h.get('/latest/meta-data/mac', { [TOKEN]: token })).status, 401);
    h.clock.set(T0);
  });
  it('one token serves many requests on separate connections', async () => {
    const token = await h.token(300);
    const paths = [
      '/latest/meta-data',
      '/latest/meta-data/instance-id',
      '/latest/user-data',
      '/latest/meta-data/placement/region',
      `/latest/meta-data/iam/security-credentials/${ROLE}`,
    ];
    for (const p of paths) assert.equal((await h.get(p, { [TOKEN]: token })).status, 200, p);
  });
  it('tokens are distinct and a token of another instance is refused', async () => {
    const a = await h.token(60);
    const b = await h.token(60);
    assert.notEqual(a, b);
    await withHarness({ httpTokens: 'required' }, async (other) => {
      assertErrorPage(await other.get('/latest/meta-data', { [TOKEN]: a }), 401, 'Unauthorized');
    });
  });
  it('a token obtained while tokens were optional keeps working once they are required', async () => {
    await withHarness({ httpTokens: 'optional' }, async (g) => {
      const token = await g.token(300);
      await g.modify({ 'instance-id': 'i-0123456789abcdef0', 'http-tokens': 'required' });
      g.scheduler.runAll();
      assert.equal((await g.get('/latest/meta-data')).status, 401);
      assert.equal((await g.get('/latest/meta-data', { [TOKEN]: token })).status, 200);
    });
  });
});

describe('imds metadata service: token flood (per-client bound)', () => {
  /** A token PUT from a given loopback source address (127.0.0.0/8 is all local on Linux). */
  function putFrom(h: Harness, localAddress: string): Promise<WireResponse> {
    const url = new URL(h.metadataUrl);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'PUT',
          path: '/latest/api/token',
          localAddress,
          agent: false,
          headers: { 'X-cloud-metadata-token-ttl-seconds': '21600' },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }
  it("1 001 token PUTs from one client (bound 50, instance bound 100) never invalidate another client's live token", async () => {
    const h = await startHarness({ maxTokens: 100, maxTokensPerClient: 50 });
    try {
      const victim = await putFrom(h, '127.0.0.2');
      assert.equal(victim.status, 200);
      for (let i = 0; i < 1001; i++) assert.equal((await putFrom(h, '127.0.0.3')).status, 200);
      const res = await h.get('/latest/meta-data/instance-id', { [TOKEN]: victim.body });
      assert.equal(res.status, 200, "the other client's token still works");
    } finally {
      await h.close();
    }
  });
  it('an instance full of live tokens answers 429 to a new client instead of evicting anyone', async () => {
    const h = await startHarness({ maxTokens: 4, maxTokensPerClient: 2 });
    try {
      const live: string[] = [];
      for (const a of ['127.0.0.2', '127.0.0.3'])
        for (let i = 0; i < 2; i++) live.push((await putFrom(h, a)).body);
      const res = await putFrom(h, '127.0.0.4');
      assert.equal(res.status, 429);
      assert.equal(readTitle(res.body), '429 - Too Many Requests');
      for (const t of live) assert.equal((await h.get('/latest/meta-data', { [TOKEN]: t })).status, 200);
    } finally {
      await h.close();
    }
  });
});

describe('imds metadata service: credentials', () => {
  const LIFETIME = 21600;
  const ROTATE_BEFORE = 900;
  const PATHS = [
    `/latest/meta-data/iam/security-credentials/${ROLE}`,
    '/latest/meta-data/identity-credentials/compute/security-credentials/compute-instance',
  ];
  let h: Harness;
  before(async () => {
    h = await startHarness({
      credentials: { lifetimeSeconds: LIFETIME, rotateBeforeSeconds: ROTATE_BEFORE },
    });
  });
  after(async () => h.close());

  const read = async (path: string) => JSON.parse((await h.get(path)).body) as Record<string, string>;

  for (const path of PATHS) {
    it(`${path}: exactly the seed's fields, with the expected formats`, async () => {
      h.clock.set(T0);
      const c = await read(path);
      assert.deepEqual(Object.keys(c), CREDENTIAL_FIELDS);
      assert.equal(c['Code'], 'Success');
      assert.equal(c['Type'], 'CLOUD-HMAC');
      assert.match(c['AccessKeyId'] ?? '', /^ASIA[A-Z2-7]{16}$/);
      assert.match(c['SecretAccessKey'] ?? '', /^[A-Za-z0-9+/=]{40}$/);
      assert.ok((c['Token'] ?? '').length >= 100);
      assert.match(c['LastUpdated'] ?? '', ISO_UTC);
      assert.match(c['Expiration'] ?? '', ISO_UTC);
    });
    it(`${path}: the same credentials until ${ROTATE_BEFORE}s before expiry, then new ones`, async () => {
      h.clock.set(T0 + 1_000_000_000);
      const start = h.clock.now();
      const first = await read(path);
      assert.equal(Date.parse(first['Expiration'] ?? ''), Math.floor(start / 1000) * 1000 + LIFETIME * 1000);
      h.clock.set(start + (LIFETIME - ROTATE_BEFORE) * 1000 - 1);
      assert.deepEqual(await read(path), first);
      h.clock.set(start + (LIFETIME - ROTATE_BEFORE) * 1000);
      const second = await read(path);
      assert.notEqual(second['AccessKeyId'], first['AccessKeyId']);
      assert.notEqual(second['SecretAccessKey'], first['SecretAccessKey']);
      assert.notEqual(second['Token'], first['Token']);
      assert.ok(Date.parse(second['Expiration'] ?? '') > Date.parse(first['Expiration'] ?? ''));
      assert.ok(Date.parse(second['LastUpdated'] ?? '') > Date.parse(first['LastUpdated'] ?? ''));
      assert.ok(Date.parse(first['Expiration'] ?? '') > h.clock.now(), 'rotated before the old set expired');
    });
    it(`${path}: over two days in 7-minute steps, never served with less than ${ROTATE_BEFORE}s left`, async () => {
      h.clock.set(T0 + 2_000_000_000);
      const keys = new Set<string>();
      for (let t = 0; t < 2 * 86400; t += 420) {
        h.clock.set(T0 + 2_000_000_000 + t * 1000);
        const c = await read(path);
        keys.add(c['AccessKeyId'] ?? '');
        assert.ok(
          Date.parse(c['Expiration'] ?? '') - h.clock.now() >= ROTATE_BEFORE * 1000 - 1000,
          `at +${t}s`,
        );
      }
      assert.ok(keys.size >= 8, `rotated ${keys.size} times in two days`);
    });
  }
  it('iam/info reports the instance profile and the LastUpdated of the current credentials', async () => {
    h.clock.set(T0 + 3_000_000_000);
    const creds = await read(PATHS[0] ?? '');
    const info = await read('/latest/meta-data/iam/info');
    assert.deepEqual(info, {
      Code: 'Success',
      LastUpdated: creds['LastUpdated'],
      InstanceProfileArn: 'arn:cloud:iam::123456789012:instance-profile/rtctl-node',
      InstanceProfileId: 'AIPA0123456789ABCDEFG',
    });
  });
});
