// modify-instance-metadata-options over the management endpoint: the seed's "Options state" table, the
// pending → applied transition (manual scheduler, then the real timer), validation errors and unknown
// instances, and the separation of the management port from the metadata port.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { pino } from 'pino';
import { parseConfig } from '../../imds/config.js';
import { timerScheduler } from '../../imds/scheduler.js';
import { startImds } from '../../imds/serve.js';
import { systemClock } from '../../imds/clock.js';
import { MANAGE_TOKEN, sendManage, sendRequest, startHarness, type Harness } from './support/harness.js';

const ID = 'i-0123456789abcdef0';
const RESPONSE_FIELDS = [
  'State',
  'HttpTokens',
  'HttpPutResponseHopLimit',
  'HttpEndpoint',
  'HttpProtocolIpv6',
  'InstanceMetadataTags',
];

interface OptionsResponse {
  InstanceId: string;
  InstanceMetadataOptions: Record<string, string | number>;
}

async function describeOptions(h: Harness, id = ID): Promise<OptionsResponse> {
  const res = await sendManage(h.manageUrl, 'GET', `/instances/${id}/metadata-options`);
  assert.equal(res.status, 200, res.body);
  return JSON.parse(res.body) as OptionsResponse;
}

describe('imds management: options state (seed table: (any) --modify-instance-metadata-options--> pending)', () => {
  const changes: { params: Record<string, string | number>; expect: Record<string, string | number> }[] = [
    { params: { 'http-tokens': 'required' }, expect: { HttpTokens: 'required' } },
    { params: { 'http-endpoint': 'disabled' }, expect: { HttpEndpoint: 'disabled' } },
    { params: { 'http-put-response-hop-limit': 2 }, expect: { HttpPutResponseHopLimit: 2 } },
    { params: { 'instance-metadata-tags': 'enabled' }, expect: { InstanceMetadataTags: 'enabled' } },
    {
      params: {
        'http-tokens': 'required',
        'http-put-response-hop-limit': 1,
        'http-endpoint': 'enabled',
        'instance-metadata-tags': 'disabled',
      },
      expect: {
        HttpTokens: 'required',
        HttpPutResponseHopLimit: 1,
        HttpEndpoint: 'enabled',
        InstanceMetadataTags: 'disabled',
      },
    },
  ];
  for (const from of ['applied', 'pending'] as const) {
    for (const change of changes) {
      it(`from ${from}: ${JSON.stringify(change.params)} → State pending, the response returns the new values`, async () => {
        const h = await startHarness();
        try {
          if (from === 'pending') {
            const first = await h.modify({ 'instance-id': ID, 'http-put-response-hop-limit': 3 });
            assert.equal(first.status, 200);
            assert.equal((await describeOptions(h)).InstanceMetadataOptions['State'], 'pending');
          } else {
            assert.equal((await describeOptions(h)).InstanceMetadataOptions['State'], 'applied');
          }
          const res = await h.modify({ 'instance-id': ID, ...change.params });
          assert.equal(res.status, 200, res.body);
          assert.match(String(res.headers['content-type']), /^application\/json/);
          const body = JSON.parse(res.body) as OptionsResponse;
          assert.deepEqual(Object.keys(body), ['InstanceId', 'InstanceMetadataOptions']);
          assert.equal(body.InstanceId, ID);
          assert.deepEqual(Object.keys(body.InstanceMetadataOptions), RESPONSE_FIELDS);
          assert.equal(body.InstanceMetadataOptions['State'], 'pending');
          assert.equal(body.InstanceMetadataOptions['HttpProtocolIpv6'], 'disabled');
          for (const [k, v] of Object.entries(change.expect))
            assert.equal(body.InstanceMetadataOptions[k], v, k);
          if (from === 'pending' && !('http-put-response-hop-limit' in change.params)) {
            assert.equal(
              body.InstanceMetadataOptions['HttpPutResponseHopLimit'],
              3,
              'earlier pending values are kept',
            );
          }
          assert.equal(h.scheduler.pending(), 1, 'a newer change replaces the pending application');
          h.scheduler.runAll();
          const applied = await describeOptions(h);
          assert.deepEqual(applied.InstanceMetadataOptions, {
            ...body.InstanceMetadataOptions,
            State: 'applied',
          });
        } finally {
          await h.close();
        }
      });
    }
  }

  it('while pending the old options are still enforced; once applied the new ones are', async () => {
    const h = await startHarness();
    try {
      assert.equal((await h.get('/latest/meta-data/instance-id')).status, 200);
      await h.modify({ 'instance-id': ID, 'http-tokens': 'required' });
      assert.equal((await h.get('/latest/meta-data/instance-id')).status, 200, 'pending: v1 still served');
      h.scheduler.runAll();
      assert.equal((await h.get('/latest/meta-data/instance-id')).status, 401, 'applied: v1 refused');
      await h.modify({ 'instance-id': ID, 'http-endpoint': 'disabled' });
      h.scheduler.runAll();
      assert.equal((await h.putToken('60')).status, 403);
      await h.modify({ 'instance-id': ID, 'http-endpoint': 'enabled', 'http-tokens': 'optional' });
      h.scheduler.runAll();
      assert.equal((await h.get('/latest/meta-data/instance-id')).status, 200);
    } finally {
      await h.close();
    }
  });

  it('with the real timer, State moves from pending to applied after applyDelayMs', async () => {
    const parsed = parseConfig({ listen: '127.0.0.1:0', manageListen: '127.0.0.1:0', applyDelayMs: 50 });
    assert.ok(parsed.ok);
    const imds = await startImds({
      config: parsed.config,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      scheduler: timerScheduler,
      socketTtl: undefined,
      manageToken: MANAGE_TOKEN,
    });
    try {
      const manage = `http://${imds.manage.host}:${imds.manage.port}`;
      const res = await sendManage(
        manage,
        'POST',
        '/modify-instance-metadata-options',
        { 'content-type': 'application/json' },
        JSON.stringify({ 'instance-id': ID, 'http-tokens': 'required' }),
      );
      assert.equal((JSON.parse(res.body) as OptionsResponse).InstanceMetadataOptions['State'], 'pending');
      let state = 'pending';
      for (let i = 0; i < 100 && state === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        const d = await sendManage(manage, 'GET', `/instances/${ID}/metadata-options`);
        state = String((JSON.parse(d.body) as OptionsResponse).InstanceMetadataOptions['State']);
      }
      assert.equal(state, 'applied');
    } finally {
      await imds.close();
    }
  });
});

describe('imds management: rejected requests', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());

  const cases: { name: string; body: unknown; code: string; mentions: RegExp }[] = [
    {
      name: 'http-tokens maybe',
      body: { 'instance-id': ID, 'http-tokens': 'maybe' },
      code: 'InvalidParameterValue',
      mentions: /http-tokens.*optional, required/,
    },
    {
      name: 'http-endpoint on',
      body: { 'instance-id': ID, 'http-endpoint': 'on' },
      code: 'InvalidParameterValue',
      mentions: /http-endpoint.*enabled, disabled/,
    },
    {
      name: 'hop limit 0',
      body: { 'instance-id': ID, 'http-put-response-hop-limit': 0 },
      code: 'InvalidParameterValue',
      mentions: /from 1 to 64/,
    },
    {
      name: 'hop limit 65',
      body: { 'instance-id': ID, 'http-put-response-hop-limit': 65 },
      code: 'InvalidParameterValue',
      mentions: /from 1 to 64/,
    },
    {
      name: 'hop limit 1.5',
      body: { 'instance-id': ID, 'http-put-response-hop-limit': 1.5 },
      code: 'InvalidParameterValue',
      mentions: /1\.5/,
    },
    {
      name: 'hop limit "two"',
      body: { 'instance-id': ID, 'http-put-response-hop-limit': 'two' },
      code: 'InvalidParameterValue',
      mentions: /two/,
    },
    {
      name: 'instance-metadata-tags yes',
      body: { 'instance-id': ID, 'instance-metadata-tags': 'yes' },
      code: 'InvalidParameterValue',
      mentions: /instance-metadata-tags/,
    },
    {
      name: 'an unknown parameter',
      body: { 'instance-id': ID, 'http-tokens': 'required', 'http-protocol-ipv6': 'enabled' },
      code: 'UnknownParameter',
      mentions: /http-protocol-ipv6/,
    },
    {
      name: 'no instance-id',
      body: { 'http-tokens': 'required' },
      code: 'MissingParameter',
      mentions: /instance-id is required/,
    },
    {
      name: 'a malformed instance-id',
      body: { 'instance-id': 'web-1', 'http-tokens': 'required' },
      code: 'InvalidInstanceID.Malformed',
      mentions: /web-1/,
    },
    {
      name: 'no option to change',
      body: { 'instance-id': ID },
      code: 'MissingParameter',
      mentions: /At least one of/,
    },
    {
      name: 'an unknown instance',
      body: { 'instance-id': 'i-00000000000000001', 'http-tokens': 'required' },
      code: 'InvalidInstanceID.NotFound',
      mentions: /i-00000000000000001.*does not exist/,
    },
    { name: 'a JSON array', body: [ID], code: 'InvalidRequest', mentions: /JSON object/ },
  ];
  for (const c of cases) {
    it(`${c.name} → 400 ${c.code}, options unchanged`, async () => {
      const before = await describeOptions(h);
      const res = await h.modify(c.body);
      assert.equal(res.status, 400, res.body);
      const body = JSON.parse(res.body) as { Error: { Code: string; Message: string } };
      assert.equal(body.Error.Code, c.code);
      assert.match(body.Error.Message, c.mentions);
      assert.deepEqual(await describeOptions(h), before);
      assert.equal(h.scheduler.pending(), 0);
    });
  }
  it('a body that is not JSON → 400 InvalidRequest', async () => {
    const res = await sendManage(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/json' },
      '{"instance-id":',
    );
    assert.equal(res.status, 400);
    assert.match(res.body, /not valid JSON/);
  });
  it('a body over 16 KiB → 413', async () => {
    const res = await sendManage(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/json' },
      JSON.stringify({ pad: 'x'.repeat(20000) }),
    );
    assert.equal(res.status, 413);
  });
  it('describe of an unknown instance → 400 InvalidInstanceID.NotFound', async () => {
    const res = await sendManage(h.manageUrl, 'GET', '/instances/i-00000000000000001/metadata-options');
    assert.equal(res.status, 400);
    assert.match(res.body, /InvalidInstanceID\.NotFound/);
  });
});

describe('imds management: never on the metadata port', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  it('listens on a different port than the metadata service', () => {
    assert.notEqual(h.manageUrl, h.metadataUrl);
  });
  it('the metadata port refuses the modify operation (405) and nothing changes', async () => {
    const res = await sendRequest(
      h.metadataUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/json' },
      JSON.stringify({ 'instance-id': ID, 'http-tokens': 'required' }),
    );
    assert.equal(res.status, 405);
    assert.equal(h.scheduler.pending(), 0);
    assert.equal((await describeOptions(h)).InstanceMetadataOptions['HttpTokens'], 'optional');
  });
  it('the management port serves no metadata', async () => {
    assert.equal((await sendManage(h.manageUrl, 'GET', '/latest/meta-data')).status, 404);
  });
  it('a config that puts both on one address is rejected', () => {
    const parsed = parseConfig({ listen: '127.0.0.1:8080', manageListen: '127.0.0.1:8080' });
    assert.equal(parsed.ok, false);
    assert.ok(
      !parsed.ok &&
        parsed.errors.some((e) => e.code === 'imds-config-conflict' && /already used/.test(e.message)),
    );
  });
});

describe('imds management: console form and request media types', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  const form = (body: string, headers: Record<string, string> = {}) =>
    sendRequest(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      `${body}&manage-token=${MANAGE_TOKEN}`,
    );

  it('GET / serves the form: every instance id and every option with its allowed values', async () => {
    const res = await sendManage(h.manageUrl, 'GET', '/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<form method="post" action="\/modify-instance-metadata-options">/);
    assert.match(res.body, new RegExp(`<option>${ID}</option>`));
    for (const name of [
      'http-endpoint',
      'http-tokens',
      'http-put-response-hop-limit',
      'instance-metadata-tags',
    ])
      assert.match(res.body, new RegExp(`name="${name}"`));
    for (const v of ['enabled', 'disabled', 'optional', 'required'])
      assert.match(res.body, new RegExp(`<option>${v}</option>`));
  });
  it('a same-origin form post is the same operation; fields left empty are unchanged', async () => {
    const url = new URL(h.manageUrl);
    const res = await form(
      `instance-id=${ID}&http-endpoint=&http-tokens=required&http-put-response-hop-limit=2&instance-metadata-tags=`,
      { origin: `http://${url.host}` },
    );
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body) as OptionsResponse;
    assert.equal(body.InstanceMetadataOptions['State'], 'pending');
    assert.equal(body.InstanceMetadataOptions['HttpTokens'], 'required');
    assert.equal(body.InstanceMetadataOptions['HttpPutResponseHopLimit'], 2);
    assert.equal(body.InstanceMetadataOptions['HttpEndpoint'], 'enabled');
    h.scheduler.runAll();
  });
  it('a form post with a bad value is rejected like JSON (400 InvalidParameterValue)', async () => {
    const res = await form(`instance-id=${ID}&http-put-response-hop-limit=99`);
    assert.equal(res.status, 400);
    assert.match(res.body, /InvalidParameterValue/);
  });
  it('a form post from another origin is refused (403) and changes nothing', async () => {
    const before = await describeOptions(h);
    const res = await form(`instance-id=${ID}&http-endpoint=disabled`, { origin: 'http://attacker.example' });
    assert.equal(res.status, 403);
    assert.match(res.body, /another origin/);
    assert.deepEqual(await describeOptions(h), before);
    assert.equal(h.scheduler.pending(), 0);
  });
  it('a JSON body sent as text/plain (what a cross-site page can send) is refused with 415', async () => {
    const res = await sendManage(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'text/plain' },
      JSON.stringify({ 'instance-id': ID, 'http-endpoint': 'disabled' }),
    );
    assert.equal(res.status, 415);
    assert.equal(h.scheduler.pending(), 0);
  });
});

describe('imds management: Host, Origin and the management token (DNS rebinding, local users)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  const modify = (headers: Record<string, string>, body = { 'instance-id': ID, 'http-tokens': 'optional' }) =>
    sendRequest(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/json', ...headers },
      JSON.stringify(body),
    );
  const bearer = { authorization: `Bearer ${MANAGE_TOKEN}` };
  const refused: { name: string; headers: Record<string, string>; status: number; message: RegExp }[] = [
    {
      name: 'a DNS-rebinding page (Host: attacker.example, right token)',
      headers: { ...bearer, host: 'attacker.example:9180' },
      status: 403,
      message: /Host header must name this endpoint/,
    },
    {
      name: 'a Host that is a DNS name resolving to loopback',
      headers: { ...bearer, host: 'localtest.me' },
      status: 403,
      message: /Host header/,
    },
    {
      name: 'a cross-origin JSON post (Origin of another site, right token)',
      headers: { ...bearer, origin: 'http://attacker.example' },
      status: 403,
      message: /another origin/,
    },
    {
      name: 'a request the browser marks Sec-Fetch-Site: cross-site',
      headers: { ...bearer, 'sec-fetch-site': 'cross-site' },
      status: 403,
      message: /another origin/,
    },
    { name: 'no token (any local user)', headers: {}, status: 401, message: /AuthFailure.*required/ },
    {
      name: 'a wrong token',
      headers: { authorization: 'Bearer not-the-token' },
      status: 401,
      message: /AuthFailure.*not valid/,
    },
    {
      name: 'a token of the wrong scheme',
      headers: { authorization: `Basic ${MANAGE_TOKEN}` },
      status: 401,
      message: /AuthFailure/,
    },
  ];
  for (const r of refused) {
    it(`${r.name} → ${r.status}, nothing changes`, async () => {
      await h.modify({ 'instance-id': ID, 'http-tokens': 'required' });
      h.scheduler.runAll();
      const res = await modify(r.headers);
      assert.equal(res.status, r.status, res.body);
      assert.match(res.body, r.message);
      assert.equal(h.scheduler.pending(), 0);
      assert.equal((await describeOptions(h)).InstanceMetadataOptions['HttpTokens'], 'required');
    });
  }
  it('describe and triggers need the token too (401 without it)', async () => {
    assert.equal((await sendRequest(h.manageUrl, 'GET', `/instances/${ID}/metadata-options`)).status, 401);
    const t = await sendRequest(
      h.manageUrl,
      'POST',
      `/instances/${ID}/triggers`,
      { 'content-type': 'application/json' },
      JSON.stringify({ type: 'rebalance-recommendation' }),
    );
    assert.equal(t.status, 401);
  });
  it('a console form post without the manage-token field → 401', async () => {
    const url = new URL(h.manageUrl);
    const res = await sendRequest(
      h.manageUrl,
      'POST',
      '/modify-instance-metadata-options',
      { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${url.host}` },
      `instance-id=${ID}&http-tokens=optional`,
    );
    assert.equal(res.status, 401);
  });
  it('Host localhost:<port> and [::1]-style literals are accepted with the token', async () => {
    const res = await modify({ ...bearer, host: `localhost:${new URL(h.manageUrl).port}` });
    assert.equal(res.status, 200, res.body);
    h.scheduler.runAll();
  });
  it('/healthz, the form and the identity certificate need no token', async () => {
    assert.equal((await sendRequest(h.manageUrl, 'GET', '/healthz')).status, 200);
    assert.equal((await sendRequest(h.manageUrl, 'GET', '/')).status, 200);
    assert.equal((await sendRequest(h.manageUrl, 'GET', '/identity-certificate')).status, 200);
  });
  it('the form page asks for the management token', async () => {
    assert.match((await sendRequest(h.manageUrl, 'GET', '/')).body, /name="manage-token" type="password"/);
  });
  it('GET * and an absolute-form target → 400', async () => {
    assert.equal((await sendRequest(h.manageUrl, 'GET', '*')).status, 400);
    assert.equal((await sendRequest(h.manageUrl, 'GET', 'http://127.0.0.1/healthz')).status, 400);
  });
});
