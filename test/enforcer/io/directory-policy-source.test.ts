// The directory policy source on a real directory: first snapshot, reload on change (add, edit, delete),
// bursts coalesced, files cut short read again, namespace postures from Namespace documents, and invalid
// policies reported and left out.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createDirectoryPolicySource } from '../../../enforcer/io/directory-policy-source.js';
import type { PolicySnapshot } from '../../../enforcer/policy-source.js';

const policy = (name: string, path: string): string =>
  `apiVersion: security.runtime.com/v1\nkind: RuntimePolicy\nmetadata:\n  name: ${name}\n  namespace: ns-a\nspec:\n  selector:\n    matchLabels:\n      app: web\n  process:\n    matchPaths:\n    - path: ${path}\n  action: Block\n`;

describe('directory policy source', function () {
  this.timeout(20000);
  let dir = '';
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'rtctl-policies-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The newest snapshot once it satisfies `ok` (a reload may pass through intermediate states under load). */
  async function until(
    snapshots: PolicySnapshot[],
    ok: (s: PolicySnapshot) => boolean,
  ): Promise<PolicySnapshot> {
    const end = Date.now() + 8000;
    for (;;) {
      const s = snapshots[snapshots.length - 1];
      if (s !== undefined && ok(s)) return s;
      if (Date.now() > end) throw new Error(`no such reload; last: ${JSON.stringify(s?.ruleSet)}`);
      await sleep(20);
    }
  }

  async function next(snapshots: PolicySnapshot[], count: number): Promise<PolicySnapshot> {
    const end = Date.now() + 8000;
    while (snapshots.length < count) {
      if (Date.now() > end) throw new Error('no reload');
      await sleep(20);
    }
    const s = snapshots[count - 1];
    assert.ok(s);
    return s;
  }

  it('reads, then reloads on add, edit and delete', async () => {
    writeFileSync(join(dir, 'a.yaml'), policy('a', '/bin/sleep'));
    const snapshots: PolicySnapshot[] = [];
    const source = createDirectoryPolicySource({
      dir,
      logger: pino({ level: 'silent' }),
      debounceMs: 30,
      rescanMs: 500,
    });
    const first = await source.start((s) => snapshots.push(s));
    try {
      assert.deepEqual(
        first.ruleSet.policies.map((p) => p.name),
        ['a'],
      );
      const names = (s: PolicySnapshot): string => s.ruleSet.policies.map((p) => p.name).join(',');
      writeFileSync(join(dir, 'b.yml'), policy('b', '/bin/cat'));
      await until(snapshots, (s) => names(s) === 'a,b');
      writeFileSync(join(dir, 'a.yaml'), policy('a', '/bin/ls'));
      const edited = await until(snapshots, (s) => {
        const m = s.ruleSet.policies.find((p) => p.name === 'a')?.rules[0]?.matcher;
        return m?.kind === 'path' && m.path === '/bin/ls';
      });
      const a = edited.ruleSet.policies.find((p) => p.name === 'a');
      assert.deepEqual(
        a?.rules.map((r) => r.matcher),
        [{ kind: 'path', path: '/bin/ls' }],
      );
      unlinkSync(join(dir, 'b.yml'));
      await until(snapshots, (s) => names(s) === 'a');
      writeFileSync(
        join(dir, 'ns.yaml'),
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-a\n  annotations:\n    runtime-file-posture: block\n',
      );
      await until(snapshots, (s) => s.postures.get('ns-a')?.file === 'block');
    } finally {
      await source.stop();
    }
  });

  it('reports an invalid policy with a code and a location and leaves it out', async () => {
    writeFileSync(join(dir, 'ok.yaml'), policy('ok', '/bin/sleep'));
    writeFileSync(join(dir, 'bad.yaml'), policy('bad', 'relative/path'));
    const source = createDirectoryPolicySource({ dir, logger: pino({ level: 'silent' }) });
    const s = await source.start(() => undefined);
    await source.stop();
    assert.deepEqual(
      s.ruleSet.policies.map((p) => p.name),
      ['ok'],
    );
    const d = s.diagnostics.find((x) => x.file === 'bad.yaml');
    assert.ok(d, JSON.stringify(s.diagnostics));
    assert.match(d.code, /^RT\d{4}$/);
    assert.ok((d.start?.line ?? 0) > 0);
  });

  it('enforces the policies of a ConfigMap volume (files linked through ..data), each once', async () => {
    const stamp = '..2026_01_01_00_00_00.000000001';
    mkdirSync(join(dir, stamp));
    writeFileSync(join(dir, stamp, 'a.yaml'), policy('a', '/bin/sleep'));
    symlinkSync(stamp, join(dir, '..data'));
    symlinkSync(join('..data', 'a.yaml'), join(dir, 'a.yaml'));
    const source = createDirectoryPolicySource({ dir, logger: pino({ level: 'silent' }) });
    const s = await source.start(() => undefined);
    await source.stop();
    assert.deepEqual(
      s.ruleSet.policies.map((p) => p.name),
      ['a'],
    );
    assert.deepEqual(s.diagnostics, []);
  });

  it('reads with lint’s bounds: a file that is not UTF-8 is reported by its name and left out', async () => {
    writeFileSync(join(dir, 'ok.yaml'), policy('ok', '/bin/sleep'));
    writeFileSync(join(dir, 'u16.yaml'), Buffer.from(policy('u16', '/bin/cat'), 'utf16le'));
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const source = createDirectoryPolicySource({ dir, logger });
    const s = await source.start(() => undefined);
    await source.stop();
    assert.deepEqual(
      s.ruleSet.policies.map((p) => p.name),
      ['ok'],
    );
    assert.ok(
      lines.some((l) => l.includes('"code":"RT1008"') && l.includes('"file":"u16.yaml"')),
      lines.join(''),
    );
  });

  it('coalesces a burst of writes into one reload that carries the last content', async () => {
    writeFileSync(join(dir, 'a.yaml'), policy('a', '/bin/sleep'));
    const snapshots: PolicySnapshot[] = [];
    const source = createDirectoryPolicySource({ dir, logger: pino({ level: 'silent' }), rescanMs: 60_000 });
    await source.start((s) => snapshots.push(s));
    try {
      // 50 writes in one turn of the event loop: their watch events all arrive after the last one.
      for (let i = 0; i < 50; i++) writeFileSync(join(dir, 'a.yaml'), policy('a', `/bin/tool${i}`));
      const s = await next(snapshots, 1);
      assert.deepEqual(
        s.ruleSet.policies[0]?.rules.map((r) => r.matcher),
        [{ kind: 'path', path: '/bin/tool49' }],
      );
      assert.ok(snapshots.length <= 2, `one reload for the burst (${snapshots.length})`);
    } finally {
      await source.stop();
    }
  });

  it('reads again a changed file cut short (no final newline) and applies what it settles to', async () => {
    writeFileSync(join(dir, 'a.yaml'), policy('a', '/bin/sleep'));
    const snapshots: PolicySnapshot[] = [];
    const source = createDirectoryPolicySource({ dir, logger: pino({ level: 'silent' }), rescanMs: 60_000 });
    await source.start((s) => snapshots.push(s));
    try {
      // A writer mid-way: the document stops inside its rule list; then the rest arrives.
      const whole = policy('b', '/bin/cat');
      writeFileSync(join(dir, 'b.yaml'), whole.slice(0, whole.indexOf('/bin/cat') + 4));
      writeFileSync(join(dir, 'b.yaml'), whole);
      const s = await next(snapshots, 1);
      assert.deepEqual(
        s.ruleSet.policies.map((p) => p.name),
        ['a', 'b'],
      );
      // A file that settles without its final newline is applied all the same (after the settle reads).
      writeFileSync(join(dir, 'c.yaml'), policy('c', '/bin/ls').trimEnd());
      assert.deepEqual(
        (await next(snapshots, 2)).ruleSet.policies.map((p) => p.name),
        ['a', 'b', 'c'],
      );
    } finally {
      await source.stop();
    }
  });

  it('reads a file cut short again at the writer’s next event, not after the settle time', async () => {
    writeFileSync(join(dir, 'a.yaml'), policy('a', '/bin/sleep'));
    const snapshots: PolicySnapshot[] = [];
    // A settle time far beyond the deadline of `next`: only the writer's own event can end the wait.
    const source = createDirectoryPolicySource({
      dir,
      logger: pino({ level: 'silent' }),
      rescanMs: 60_000,
      settleMs: 60_000,
    });
    await source.start((s) => snapshots.push(s));
    try {
      writeFileSync(join(dir, 'b.yaml'), ''); // created empty: a writer between create and write
      await sleep(50);
      writeFileSync(join(dir, 'b.yaml'), policy('b', '/bin/cat'));
      const s = await next(snapshots, 1);
      assert.deepEqual(
        s.ruleSet.policies.map((p) => p.name),
        ['a', 'b'],
      );
    } finally {
      await source.stop();
    }
  });

  it('fails to start on a missing directory', async () => {
    const source = createDirectoryPolicySource({
      dir: join(dir, 'missing'),
      logger: pino({ level: 'silent' }),
    });
    await assert.rejects(
      source.start(() => undefined),
      /ENOENT/,
    );
  });
});
