// The project's own conformance fixtures (test/fixtures/conformance/): together they use every property path
// of both kinds' schemas and every value of the schema's small enums (action, selector operators), and each
// lints without errors and compiles for every target, deterministically. The schema is walked here, so a
// field added to compiler/schema/policy-schema.ts fails this test until a fixture uses it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { compile } from '../../compiler/compile.js';
import { lintTexts, type SourceText } from '../../compiler/lint.js';
import { isRecord } from '../../compiler/model/json-value.js';
import { RUNTIME_HOST_POLICY_SCHEMA, RUNTIME_POLICY_SCHEMA } from '../../compiler/schema/policy-schema.js';
import { CONFORMANCE_FIXTURES } from '../support/paths.js';

/** Enums with at most this many values have each value covered (the syscall names are not). */
const SMALL_ENUM = 5;

/** Paths no fixture needs to write, with the reason. */
const EXEMPT: Readonly<Record<string, string>> = {
  status: 'written by the cluster, not by policy authors',
  'status.status': 'written by the cluster, not by policy authors',
  'RuntimeHostPolicy metadata.namespace': 'the kind is cluster-scoped',
};

const SCHEMAS: Readonly<Record<string, unknown>> = {
  RuntimePolicy: RUNTIME_POLICY_SCHEMA,
  RuntimeHostPolicy: RUNTIME_HOST_POLICY_SCHEMA,
};

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** An enum value, named by its field wherever the field appears (`action=Allow`, `operator=NotIn`). */
function enumValue(prefix: string, value: unknown): string {
  const field = prefix.replace(/\[\]/g, '').split('.').pop() ?? '';
  return `${field}=${String(value)}`;
}

/**
 * Every path the schema allows: `spec.file.matchPaths[].readOnly`, `metadata.labels.*` for free keys, and
 * `action=Block` for each value of a small enum (named by its field, wherever it appears).
 */
function listSchemaPaths(schema: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (!isRecord(schema)) return out;
  const properties = schema['properties'];
  if (isRecord(properties)) {
    for (const [key, sub] of Object.entries(properties)) {
      out.add(join(prefix, key));
      listSchemaPaths(sub, join(prefix, key), out);
    }
  }
  const extra = schema['additionalProperties'];
  if (isRecord(extra)) {
    out.add(join(prefix, '*'));
    listSchemaPaths(extra, join(prefix, '*'), out);
  }
  if (schema['items'] !== undefined) listSchemaPaths(schema['items'], `${prefix}[]`, out);
  const values = schema['enum'];
  if (Array.isArray(values) && values.length <= SMALL_ENUM)
    for (const v of values) out.add(enumValue(prefix, v));
  return out;
}

/** The schema paths a document uses, named as listSchemaPaths names them. */
function listUsedPaths(value: unknown, schema: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (!isRecord(schema)) return out;
  if (Array.isArray(value)) {
    for (const item of value) listUsedPaths(item, schema['items'], `${prefix}[]`, out);
  } else if (isRecord(value)) {
    const properties = isRecord(schema['properties']) ? schema['properties'] : {};
    const extra = schema['additionalProperties'];
    for (const [key, sub] of Object.entries(value)) {
      const known = Object.hasOwn(properties, key);
      const subSchema = known ? properties[key] : isRecord(extra) ? extra : undefined;
      if (subSchema === undefined) continue;
      const p = join(prefix, known ? key : '*');
      out.add(p);
      listUsedPaths(sub, subSchema, p, out);
    }
  } else if (Array.isArray(schema['enum']) && schema['enum'].length <= SMALL_ENUM) {
    out.add(enumValue(prefix, value));
  }
  return out;
}

function readFixtures(): SourceText[] {
  return readdirSync(CONFORMANCE_FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({
      file: `conformance/${f}`,
      text: readFileSync(path.join(CONFORMANCE_FIXTURES, f), 'utf8'),
    }));
}

/** Schema paths per kind that no document of `sources` uses. */
function findUncovered(sources: readonly SourceText[]): Record<string, string[]> {
  const used = new Map<string, Set<string>>(Object.keys(SCHEMAS).map((k) => [k, new Set<string>()]));
  for (const s of sources) {
    for (const doc of parseAllDocuments(s.text)) {
      const object: unknown = doc.toJS();
      if (!isRecord(object)) continue;
      const kind = String(object['kind']);
      const target = used.get(kind);
      if (target === undefined) continue;
      listUsedPaths(object, SCHEMAS[kind], '', target);
    }
  }
  const out: Record<string, string[]> = {};
  for (const [kind, schema] of Object.entries(SCHEMAS)) {
    const seen = used.get(kind) ?? new Set<string>();
    out[kind] = [...listSchemaPaths(schema)]
      .filter((p) => !seen.has(p) && EXEMPT[p] === undefined && EXEMPT[`${kind} ${p}`] === undefined)
      .sort();
  }
  return out;
}

describe('conformance fixtures', () => {
  const fixtures = readFixtures();

  it('has fixtures of both kinds', () => {
    const kinds = new Set(fixtures.flatMap((f) => [...f.text.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1])));
    assert.deepEqual([...kinds].sort(), ['RuntimeHostPolicy', 'RuntimePolicy']);
  });

  it('the schema walk finds the fields of every section', () => {
    const paths = listSchemaPaths(RUNTIME_POLICY_SCHEMA, '', listSchemaPaths(RUNTIME_HOST_POLICY_SCHEMA));
    for (const p of [
      'spec.file.matchDirectories[].readOnly',
      'spec.process.matchPaths[].fromSource[].recursive',
      'spec.device.matchDevice[].subClass',
      'spec.nodeSelector.matchLabels.*',
      'action=Block',
      'operator=NotIn',
    ])
      assert.ok(paths.has(p), p);
    assert.ok(paths.size > 150, `${paths.size} paths`);
  });

  for (const kind of Object.keys(SCHEMAS)) {
    it(`use every property path and small-enum value of the ${kind} schema`, () => {
      assert.deepEqual(findUncovered(fixtures)[kind], [], `paths of ${kind} no fixture uses`);
    });
  }

  it('the coverage check notices a missing fixture', () => {
    const withoutHost = fixtures.filter((f) => !f.text.includes('kind: RuntimeHostPolicy'));
    const missing = findUncovered(withoutHost)['RuntimeHostPolicy'] ?? [];
    assert.ok(missing.includes('spec.device.matchDevice[].class'), missing.join(', '));
  });

  for (const fixture of fixtures) {
    it(`${fixture.file} lints without errors`, () => {
      const { diagnostics, documents } = lintTexts([fixture]);
      assert.deepEqual(
        diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.message}`),
        [],
      );
      assert.ok(documents.length > 0);
    });
  }

  it('compile for every target without errors, byte-identical twice and in reverse order', () => {
    const digest = (sources: readonly SourceText[]): string[] => {
      const r = compile(sources, { targets: ['all'] });
      assert.deepEqual(
        r.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.message}`),
        [],
      );
      return r.artifacts.map((a) => `${a.path} ${createHash('sha256').update(a.content).digest('hex')}`);
    };
    const first = digest(fixtures);
    assert.ok(first.some((l) => l.startsWith('rules/')) && first.some((l) => l.startsWith('selinux/')));
    assert.deepEqual(digest(fixtures), first);
    assert.deepEqual(digest([...fixtures].reverse()), first);
  });
});
