// Configuration files: valid fixtures load with defaults filled in and serve what they say; each invalid
// fixture is named after the error code it must produce and states the line and pointer it expects.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'mocha';
import { pino } from 'pino';
import { createManualClock } from '../../imds/clock.js';
import { createDefaultConfig, parseConfig } from '../../imds/config.js';
import { formatConfigError, loadConfigFile } from '../../imds/io/load-config.js';
import { createManualScheduler } from '../../imds/scheduler.js';
import { startImds } from '../../imds/serve.js';
import { sendRequest } from './support/harness.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/imds');

describe('imds config: defaults', () => {
  it('an empty config gives one instance on 169.254.169.254:80, management on 127.0.0.1:9180, options at their defaults', () => {
    const c = createDefaultConfig();
    assert.equal(c.listen, '169.254.169.254:80');
    assert.equal(c.manageListen, '127.0.0.1:9180');
    assert.equal(c.instances.length, 1);
    assert.deepEqual(c.instances[0]?.metadataOptions, {
      httpEndpoint: 'enabled',
      httpTokens: 'optional',
      httpPutResponseHopLimit: 1,
      instanceMetadataTags: 'disabled',
    });
    assert.equal(c.credentials.lifetimeSeconds, 21600);
  });
  it('parsing does not modify its input', () => {
    const input = { instances: [{}] };
    assert.ok(parseConfig(input).ok);
    assert.deepEqual(input, { instances: [{}] });
  });
  it('rotateBeforeSeconds must be below lifetimeSeconds', () => {
    const r = parseConfig({ credentials: { lifetimeSeconds: 900, rotateBeforeSeconds: 900 } });
    assert.ok(!r.ok && r.errors[0]?.pointer === '/credentials/rotateBeforeSeconds');
  });
});

describe('imds config: valid fixtures', () => {
  for (const name of readdirSync(path.join(FIXTURES, 'valid')).sort()) {
    it(`${name} loads`, async () => {
      const r = await loadConfigFile(path.join(FIXTURES, 'valid', name));
      assert.ok(r.ok, r.ok ? '' : r.errors.map(formatConfigError).join('\n'));
    });
  }
  it('full.yaml: two instances, each served on its own address with its own options', async () => {
    const r = await loadConfigFile(path.join(FIXTURES, 'valid', 'full.yaml'));
    assert.ok(r.ok);
    const imds = await startImds({
      config: r.config,
      logger: pino({ level: 'silent' }),
      clock: createManualClock(0),
      scheduler: createManualScheduler(),
      socketTtl: undefined,
      manageToken: 'config-test-token',
    });
    try {
      const [a, b] = [...imds.metadata.entries()];
      assert.ok(a && b);
      const urlA = `http://${a[1].host}:${a[1].port}`;
      const urlB = `http://${b[1].host}:${b[1].port}`;
      assert.equal(
        (await sendRequest(urlA, 'GET', '/latest/meta-data/instance-id')).status,
        401,
        'instance a requires tokens',
      );
      const token = (
        await sendRequest(urlA, 'PUT', '/latest/api/token', { 'X-cloud-metadata-token-ttl-seconds': '60' })
      ).body;
      const get = (p: string) => sendRequest(urlA, 'GET', p, { 'X-cloud-metadata-token': token });
      assert.equal((await get('/latest/meta-data/instance-id')).body, 'i-0aaaaaaaaaaaaaaa1');
      assert.equal((await get('/latest/meta-data/placement/region')).body, 'eu-west-1');
      assert.equal((await get('/latest/meta-data/tags/instance/cluster:name')).body, 'prod');
      assert.equal((await get('/latest/meta-data/iam/security-credentials/')).body, 'eks-node');
      assert.equal((await get('/latest/meta-data/public-ipv4')).status, 404, 'no public address configured');
      assert.equal((await get('/latest/meta-data/block-device-mapping/')).body, 'ami\nebs1\nroot');
      assert.match(
        (await get('/latest/meta-data/events/maintenance/scheduled')).body,
        /"Code": "system-reboot"/,
      );
      assert.equal((await get('/latest/user-data')).body, '#cloud-config\nruncmd: [echo hi]\n');
      assert.equal(
        (await sendRequest(urlA, 'GET', '/latest/meta-data/instance-id', { 'X-cloud-metadata-token': 'x' }))
          .status,
        401,
      );
      assert.equal(
        (await sendRequest(urlB, 'GET', '/latest/meta-data/instance-id')).body,
        'i-0bbbbbbbbbbbbbbb2',
      );
      assert.equal(
        (await sendRequest(urlB, 'GET', '/latest/meta-data/iam/info')).status,
        404,
        'instance b has no role',
      );
      assert.equal(
        (await sendRequest(urlB, 'GET', '/latest/meta-data/instance-id', { 'X-cloud-metadata-token': token }))
          .status,
        401,
        "a's token is not b's",
      );
    } finally {
      await imds.close();
    }
  });
});

describe('imds config: invalid fixtures (file name = expected code)', () => {
  for (const name of readdirSync(path.join(FIXTURES, 'invalid')).sort()) {
    const file = path.join(FIXTURES, 'invalid', name);
    const expectLine = /# expect: line (\d+), ?(\S*)/.exec(readFileSync(file, 'utf8'));
    const code = /^(imds-config-[a-z]+)-/.exec(name)?.[1];
    it(`${name} → ${code ?? '?'} at line ${expectLine?.[1] ?? '?'} ${expectLine?.[2] ?? ''}`, async () => {
      assert.ok(code && expectLine, 'fixture names its code and expected location');
      const r = await loadConfigFile(file);
      assert.ok(!r.ok, 'must be rejected');
      const hit = r.errors.find((e) => e.code === code);
      assert.ok(hit, `no ${code} among ${r.errors.map(formatConfigError).join('; ')}`);
      assert.equal(hit.file, file);
      assert.equal(hit.line, Number(expectLine[1]), formatConfigError(hit));
      if (expectLine[2] !== '') assert.equal(hit.pointer, expectLine[2]);
      assert.match(
        formatConfigError(hit),
        new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: ${code}: `),
      );
    });
  }
  it('a missing file → imds-config-read', async () => {
    const r = await loadConfigFile(path.join(FIXTURES, 'no-such-file.yaml'));
    assert.ok(!r.ok && r.errors[0]?.code === 'imds-config-read');
  });
});
