// The paths the reference mock has and the seed leaves open, over real HTTP on loopback: spot interruption
// notices, rebalance recommendations, scheduled maintenance events (codes, states, windows), the Auto Scaling
// target lifecycle state, and the signed instance identity document. Each is triggered from the config or
// through the management endpoint after a delay (manual clock and scheduler), and each path is served under
// v1 and v2 like every other path, and refused while the endpoint is disabled.
import assert from 'node:assert/strict';
import { createPublicKey, createVerify, X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'mocha';
import { hasCommand } from '../support/prereq.js';
import { readTitle, sendManage, sendRequest, startHarness, T0, type Harness } from './support/harness.js';

const ID = 'i-0123456789abcdef0';
const TOKEN = 'X-cloud-metadata-token';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const EVENT_TIME = /^\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

const trigger = (h: Harness, body: unknown, id = ID) =>
  sendManage(
    h.manageUrl,
    'POST',
    `/instances/${id}/triggers`,
    { 'content-type': 'application/json' },
    JSON.stringify(body),
  );

/** A spot instance with every trigger fired at start (config triggers with no delay). */
const TRIGGERED = {
  instanceLifeCycle: 'spot',
  triggers: [
    { type: 'spot-interruption', action: 'terminate' },
    { type: 'rebalance-recommendation' },
    { type: 'scheduled-event', code: 'system-reboot', eventId: 'instance-event-0123456789abcdef0' },
    { type: 'autoscaling-target-lifecycle-state', state: 'Terminated' },
  ],
};

/** Every new path with a check of its body. */
const NEW_PATHS: [string, (body: string) => void][] = [
  [
    '/latest/meta-data/spot/instance-action',
    (b) => {
      const doc = JSON.parse(b) as Record<string, string>;
      assert.deepEqual(Object.keys(doc), ['action', 'time']);
      assert.equal(doc['action'], 'terminate');
      assert.equal(doc['time'], '2026-01-01T00:02:00Z', 'two minutes after the notice');
    },
  ],
  ['/latest/meta-data/spot/termination-time', (b) => assert.equal(b, '2026-01-01T00:02:00Z')],
  ['/latest/meta-data/spot/', (b) => assert.equal(b, 'instance-action\ntermination-time')],
  [
    '/latest/meta-data/events/recommendations/rebalance',
    (b) => assert.deepEqual(JSON.parse(b), { noticeTime: '2026-01-01T00:00:00Z' }),
  ],
  ['/latest/meta-data/events/', (b) => assert.equal(b, 'maintenance/\nrecommendations/')],
  [
    '/latest/meta-data/events/maintenance/scheduled',
    (b) => {
      const [e, ...rest] = JSON.parse(b) as Record<string, string>[];
      assert.equal(rest.length, 0);
      assert.deepEqual(Object.keys(e ?? {}), [
        'NotBefore',
        'Code',
        'Description',
        'EventId',
        'NotAfter',
        'State',
      ]);
      assert.equal(e?.['Code'], 'system-reboot');
      assert.equal(e?.['State'], 'active');
      assert.equal(e?.['EventId'], 'instance-event-0123456789abcdef0');
      assert.equal(e?.['NotBefore'], '8 Jan 2026 00:00:00 GMT', 'a week after the event was scheduled');
      assert.equal(e?.['NotAfter'], '8 Jan 2026 02:00:00 GMT', 'a two-hour window');
    },
  ],
  ['/latest/meta-data/events/maintenance/history', (b) => assert.equal(b, '[]')],
  ['/latest/meta-data/autoscaling/target-lifecycle-state', (b) => assert.equal(b, 'Terminated')],
  ['/latest/dynamic', (b) => assert.equal(b, 'instance-identity/')],
  ['/latest/dynamic/instance-identity/', (b) => assert.equal(b, 'document\npkcs7\nrsa2048\nsignature')],
  [
    '/latest/dynamic/instance-identity/document',
    (b) => {
      const doc = JSON.parse(b) as Record<string, unknown>;
      assert.equal(doc['instanceId'], ID);
      assert.equal(doc['accountId'], '123456789012');
      assert.equal(doc['region'], 'us-east-1');
      assert.equal(doc['privateIp'], '10.0.1.23');
      assert.equal(doc['version'], '2017-09-30');
      assert.match(String(doc['pendingTime']), ISO);
      assert.match(b, /^\{\n {2}"accountId" : "123456789012",\n/);
    },
  ],
  ['/latest/dynamic/instance-identity/signature', (b) => assert.match(b, /^[A-Za-z0-9+/]{340,}={0,2}$/)],
  [
    '/latest/dynamic/instance-identity/pkcs7',
    (b) => assert.match(b, /^([A-Za-z0-9+/=]{64}\n)+[A-Za-z0-9+/=]{1,64}$/),
  ],
  ['/latest/dynamic/instance-identity/rsa2048', (b) => assert.match(b, /^[A-Za-z0-9+/=\n]+$/)],
];

describe('imds: new paths under v1, v2 and with the endpoint disabled', () => {
  for (const mode of ['v1 (tokens optional, no token)', 'v2 (tokens required, with a token)'] as const) {
    describe(mode, () => {
      let h: Harness;
      before(async () => {
        const httpTokens = mode.startsWith('v1') ? 'optional' : 'required';
        h = await startHarness({}, { ...TRIGGERED, metadataOptions: { httpTokens } });
      });
      after(async () => h.close());
      for (const [p, check] of NEW_PATHS) {
        it(`GET ${p} → 200`, async () => {
          const headers = mode.startsWith('v2') ? { [TOKEN]: await h.token(60) } : {};
          const res = await h.get(p, headers);
          assert.equal(res.status, 200, res.body);
          assert.match(String(res.headers['content-type']), /^text\/plain/);
          check(res.body);
        });
        if (mode.startsWith('v2')) {
          it(`GET ${p} without a token → 401`, async () => {
            const res = await h.get(p);
            assert.equal(res.status, 401);
            assert.equal(readTitle(res.body), '401 - Unauthorized');
          });
        }
      }
    });
  }
  describe('http-endpoint disabled', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({}, { ...TRIGGERED, metadataOptions: { httpEndpoint: 'disabled' } });
    });
    after(async () => h.close());
    for (const [p] of NEW_PATHS) {
      it(`GET ${p} → 403`, async () => {
        const res = await h.get(p);
        assert.equal(res.status, 403);
        assert.equal(readTitle(res.body), '403 - Forbidden');
      });
    }
  });
});

describe('imds: out of the box', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ instances: [{}] });
  });
  after(async () => h.close());
  it('with no config, GET /latest/user-data answers 200 with a default script', async () => {
    const res = await h.get('/latest/user-data');
    assert.equal(res.status, 200);
    assert.match(res.body, /^#!\/bin\/bash\n/);
  });
  it('/latest lists dynamic, meta-data and user-data', async () => {
    assert.equal((await h.get('/latest')).body, 'dynamic\nmeta-data\nuser-data');
  });
  it('nothing has happened yet: spot/ and events/recommendations/ are absent (404), maintenance is []', async () => {
    assert.equal((await h.get('/latest/meta-data/spot/instance-action')).status, 404);
    assert.equal((await h.get('/latest/meta-data/events/recommendations/rebalance')).status, 404);
    assert.equal((await h.get('/latest/meta-data/events/maintenance/scheduled')).body, '[]');
    assert.equal((await h.get('/latest/meta-data/autoscaling/target-lifecycle-state')).body, 'InService');
  });
  it('userData: null keeps the 404 of an instance without user data, and /latest no longer lists it', async () => {
    const g = await startHarness({}, { userData: null });
    try {
      assert.equal((await g.get('/latest/user-data')).status, 404);
      assert.equal((await g.get('/latest')).body, 'dynamic\nmeta-data');
    } finally {
      await g.close();
    }
  });
});

describe('imds: triggers through the management endpoint, after a delay', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({}, { instanceLifeCycle: 'spot' });
  });
  after(async () => h.close());

  it('spot-interruption (stop) after 30 s: absent until the delay elapses, then served with its time; no termination-time', async () => {
    h.clock.set(T0);
    const res = await trigger(h, { type: 'spot-interruption', action: 'stop', afterSeconds: 30 });
    assert.equal(res.status, 200, res.body);
    assert.equal((JSON.parse(res.body) as { FiresAt: string }).FiresAt, '2026-01-01T00:00:30Z');
    assert.equal((await h.get('/latest/meta-data/spot/instance-action')).status, 404);
    h.clock.set(T0 + 30_000);
    assert.equal(h.scheduler.runAll(), 1);
    const action = JSON.parse((await h.get('/latest/meta-data/spot/instance-action')).body) as Record<
      string,
      string
    >;
    assert.deepEqual(action, { action: 'stop', time: '2026-01-01T00:02:30Z' });
    assert.equal((await h.get('/latest/meta-data/spot/termination-time')).status, 404);
  });
  it('rebalance-recommendation: noticeTime is when it fired', async () => {
    h.clock.set(T0 + 60_000);
    assert.equal((await trigger(h, { type: 'rebalance-recommendation', afterSeconds: 5 })).status, 200);
    h.clock.set(T0 + 65_000);
    h.scheduler.runAll();
    assert.deepEqual(JSON.parse((await h.get('/latest/meta-data/events/recommendations/rebalance')).body), {
      noticeTime: '2026-01-01T00:01:05Z',
    });
  });
  it('scheduled-event, then scheduled-event-state canceled: the event moves from scheduled to history', async () => {
    h.clock.set(T0);
    const created = await trigger(h, {
      type: 'scheduled-event',
      code: 'instance-retirement',
      eventId: 'instance-event-00000000000000abc',
      notBeforeSeconds: 3600,
      windowSeconds: 0,
      deadlineSeconds: 86400,
    });
    assert.equal(created.status, 200, created.body);
    const [e] = JSON.parse((await h.get('/latest/meta-data/events/maintenance/scheduled')).body) as Record<
      string,
      string
    >[];
    assert.deepEqual(e, {
      NotBefore: '1 Jan 2026 01:00:00 GMT',
      Code: 'instance-retirement',
      Description: 'scheduled retirement',
      EventId: 'instance-event-00000000000000abc',
      NotBeforeDeadline: '2 Jan 2026 01:00:00 GMT',
      State: 'active',
    });
    assert.match(e?.['NotBefore'] ?? '', EVENT_TIME);
    await trigger(h, {
      type: 'scheduled-event-state',
      eventId: 'instance-event-00000000000000abc',
      state: 'canceled',
      afterSeconds: 10,
    });
    h.scheduler.runAll();
    assert.equal((await h.get('/latest/meta-data/events/maintenance/scheduled')).body, '[]');
    const [old] = JSON.parse((await h.get('/latest/meta-data/events/maintenance/history')).body) as Record<
      string,
      string
    >[];
    assert.equal(old?.['State'], 'canceled');
    assert.equal(old?.['EventId'], 'instance-event-00000000000000abc');
  });
  it('autoscaling-target-lifecycle-state: Warmed:Stopped after the delay', async () => {
    await trigger(h, {
      type: 'autoscaling-target-lifecycle-state',
      state: 'Warmed:Stopped',
      afterSeconds: 1,
    });
    assert.equal((await h.get('/latest/meta-data/autoscaling/target-lifecycle-state')).body, 'InService');
    h.scheduler.runAll();
    assert.equal(
      (await h.get('/latest/meta-data/autoscaling/target-lifecycle-state')).body,
      'Warmed:Stopped',
    );
  });
  const refused: [string, unknown, number, RegExp][] = [
    ['an unknown type', { type: 'meteor-strike' }, 400, /type must be one of/],
    [
      'a bad action',
      { type: 'spot-interruption', action: 'explode' },
      400,
      /action must be one of terminate, stop, hibernate/,
    ],
    [
      'a negative delay',
      { type: 'rebalance-recommendation', afterSeconds: -1 },
      400,
      /afterSeconds must be an integer/,
    ],
    ['an unknown field', { type: 'rebalance-recommendation', when: 'now' }, 400, /unknown field .{1,3}when/],
    [
      'a bad Auto Scaling state',
      { type: 'autoscaling-target-lifecycle-state', state: 'Dancing' },
      400,
      /state must be one of/,
    ],
    ['a body that is not an object', [1, 2], 400, /a trigger must be an object/],
  ];
  for (const [name, body, status, message] of refused) {
    it(`${name} → ${status}, nothing scheduled`, async () => {
      const res = await trigger(h, body);
      assert.equal(res.status, status, res.body);
      assert.match(res.body, message);
      assert.equal(h.scheduler.pending(), 0);
    });
  }
  it('an unknown instance → 400 InvalidInstanceID.NotFound', async () => {
    const res = await trigger(h, { type: 'rebalance-recommendation' }, 'i-0fffffffffffffff0');
    assert.equal(res.status, 400);
    assert.match(res.body, /InvalidInstanceID\.NotFound/);
  });
  it('a spot interruption on an on-demand instance → 400 UnsupportedOperation', async () => {
    const g = await startHarness();
    try {
      const res = await trigger(g, { type: 'spot-interruption' });
      assert.equal(res.status, 400);
      assert.match(res.body, /UnsupportedOperation.*needs a spot instance/);
    } finally {
      await g.close();
    }
  });
});

describe('imds: the identity document is signed for real', () => {
  let h: Harness;
  let doc: string;
  let cert: string;
  before(async () => {
    h = await startHarness();
    doc = (await h.get('/latest/dynamic/instance-identity/document')).body;
    cert = (await sendRequest(h.manageUrl, 'GET', '/identity-certificate')).body;
  });
  after(async () => h.close());
  it('GET /identity-certificate (no token needed) is an X.509 certificate', () => {
    const x = new X509Certificate(cert);
    assert.match(x.subject, /rtctl imds instance identity/);
  });
  it('signature verifies with the certificate (RSA-SHA256), and not for a changed document', async () => {
    const sig = Buffer.from((await h.get('/latest/dynamic/instance-identity/signature')).body, 'base64');
    const key = createPublicKey(new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'pem' }));
    assert.ok(createVerify('sha256').update(doc).verify(key, sig));
    assert.ok(!createVerify('sha256').update(doc.replace('us-east-1', 'us-east-2')).verify(key, sig));
  });
  it('the document is the same bytes on every read (what was signed)', async () => {
    assert.equal((await h.get('/latest/dynamic/instance-identity/document')).body, doc);
  });
  it('pkcs7 verifies with openssl smime against the certificate (detached), and fails for a changed document', async function () {
    if (!hasCommand('openssl')) this.skip();
    const pkcs7 = (await h.get('/latest/dynamic/instance-identity/pkcs7')).body;
    const dir = mkdtempSync(path.join(tmpdir(), 'rtctl-imds-p7-'));
    try {
      writeFileSync(path.join(dir, 'document'), doc);
      writeFileSync(path.join(dir, 'certificate'), cert);
      writeFileSync(path.join(dir, 'pkcs7'), `-----BEGIN PKCS7-----\n${pkcs7}\n-----END PKCS7-----\n`);
      const verify = () =>
        execFileSync(
          'openssl',
          [
            'smime',
            '-verify',
            '-in',
            'pkcs7',
            '-inform',
            'PEM',
            '-content',
            'document',
            '-certfile',
            'certificate',
            '-noverify',
          ],
          { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
        );
      assert.equal(verify().toString(), doc);
      writeFileSync(path.join(dir, 'document'), doc.replace('123456789012', '210987654321'));
      assert.throws(verify);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
