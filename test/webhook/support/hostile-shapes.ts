// Hostile AdmissionReview bodies, each just under the 3 MiB body bound: the shapes that cost the most per byte
// (huge arrays, deep nesting, many keys, long keys and strings, many rules, many findings). Shared by the
// worst-case benchmark (bench/webhook/worst-case.ts) and the webhook's bound tests.

/** Bytes a hostile body aims at: just under the 3 MiB bound, leaving room for the envelope. */
export const HOSTILE_BODY_BYTES = 3 * 1024 * 1024 - 4096;

/** A named hostile body. */
export interface HostileShape {
  name: string;
  body(): string;
}

function envelope(object: string, kind: { group: string; version: string; kind: string }): string {
  return (
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"hostile-0001",` +
    `"kind":${JSON.stringify(kind)},"operation":"CREATE","object":${object}}}`
  );
}

const POLICY_KIND = { group: 'security.runtime.com', version: 'v1', kind: 'RuntimePolicy' };

/** A RuntimePolicy whose spec is `{"selector":{"matchLabels":{}}, <specTail>}`. */
function policy(specTail: string, metadata = '{"name":"p","namespace":"default"}'): string {
  return envelope(
    `{"apiVersion":"security.runtime.com/v1","kind":"RuntimePolicy","metadata":${metadata},` +
      `"spec":{"selector":{"matchLabels":{}},${specTail}}}`,
    POLICY_KIND,
  );
}

/** `n` copies of `item(i)` joined by commas, as many as fit in `budget` bytes. */
function repeatWithin(budget: number, item: (i: number) => string): string {
  const parts: string[] = [];
  let used = 0;
  for (let i = 0; ; i++) {
    const s = item(i);
    if (used + s.length + 1 > budget) break;
    parts.push(s);
    used += s.length + 1;
  }
  return parts.join(',');
}

const BUDGET = HOSTILE_BODY_BYTES - 400;

/** Every hostile shape: those past the webhook's structure bounds, then those just within them. */
export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    // The reported case: one type error per element.
    name: 'tags-numbers',
    body: () => policy(`"action":"Block","tags":[${repeatWithin(BUDGET, () => '1')}]`),
  },
  {
    name: 'tags-strings',
    body: () => policy(`"action":"Block","tags":[${repeatWithin(BUDGET, (i) => `"t${i % 10}"`)}]`),
  },
  {
    name: 'deep-arrays',
    body: () => {
      const depth = Math.floor(BUDGET / 2);
      return policy(`"process":${'['.repeat(depth)}${']'.repeat(depth)}`);
    },
  },
  {
    name: 'deep-objects-in-metadata',
    body: () => {
      const depth = Math.floor(BUDGET / 7);
      return policy(
        '"action":"Block","process":{"matchPaths":[{"path":"/bin/sh"}]}',
        `{"name":"p","namespace":"default","managedFields":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
      );
    },
  },
  {
    name: 'many-unknown-keys',
    body: () => policy(repeatWithin(BUDGET, (i) => `"k${i}":0`)),
  },
  {
    name: 'long-unknown-keys',
    body: () => policy(repeatWithin(BUDGET, (i) => `"${String(i).padStart(9000, 'x')}":0`)),
  },
  {
    name: 'long-path',
    body: () => policy(`"action":"Block","file":{"matchPaths":[{"path":"/${'/'.repeat(BUDGET - 100)}"}]}`),
  },
  {
    name: 'many-slash-paths',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPaths":[${repeatWithin(BUDGET - 100, () => `{"path":"${'/'.repeat(199)}"}`)}]}`,
      ),
  },
  {
    name: 'many-valid-rules',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPaths":[${repeatWithin(BUDGET - 100, (i) => `{"path":"/p/${i}"}`)}]}`,
      ),
  },
  {
    name: 'many-conflicting-rules',
    body: () =>
      policy(
        `"file":{"matchPaths":[${repeatWithin(BUDGET - 100, (i) => `{"path":"/p","action":"${['Block', 'Audit', 'Allow'][i % 3] ?? 'Block'}"}`)}]}`,
      ),
  },
  {
    name: 'many-directories-with-sources',
    body: () =>
      policy(
        `"action":"Block","file":{"matchDirectories":[${repeatWithin(BUDGET - 100, (i) => `{"dir":"/d/${i % 50}/","recursive":true,"fromSource":[{"dir":"/s/${i}/"}]}`)}]}`,
      ),
  },
  {
    name: 'one-rule-many-sources',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPaths":[{"path":"/etc/shadow","fromSource":[${repeatWithin(BUDGET - 100, (i) => `{"path":"/bin/x${i}"}`)}]}]}`,
      ),
  },
  {
    name: 'many-invalid-rules',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPaths":[${repeatWithin(BUDGET - 100, (i) => `{"path":"r${i}"}`)}]}`,
      ),
  },
  {
    name: 'many-relative-patterns',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPatterns":[${repeatWithin(BUDGET - 100, (i) => `{"pattern":"r${i}"}`)}]}`,
      ),
  },
  {
    name: 'many-labels',
    body: () =>
      policy(`"action":"Block","process":{"matchPaths":[{"path":"/bin/sh"}]}`).replace(
        '"matchLabels":{}',
        `"matchLabels":{${repeatWithin(BUDGET - 200, (i) => `"k${i}":"v"`)}}`,
      ),
  },
  {
    name: 'many-syscalls',
    body: () =>
      policy(
        `"action":"Audit","syscalls":{"matchSyscalls":[{"syscall":[${repeatWithin(BUDGET - 100, () => '"openat"')}]}]}`,
      ),
  },
  {
    name: 'many-bad-syscalls',
    body: () =>
      policy(
        `"action":"Audit","syscalls":{"matchSyscalls":[{"syscall":[${repeatWithin(BUDGET - 100, (i) => `"x${i}"`)}]}]}`,
      ),
  },
  {
    name: 'many-unknown-presets',
    body: () =>
      policy(`"action":"Block","presets":[${repeatWithin(BUDGET - 100, (i) => `{"name":"p${i}"}`)}]`),
  },
  {
    name: 'long-name',
    body: () =>
      policy(
        '"action":"Block","process":{"matchPaths":[{"path":"/bin/sh"}]}',
        `{"name":"${'a'.repeat(BUDGET - 200)}-","namespace":"default"}`,
      ),
  },
  {
    name: 'namespace-many-annotations',
    body: () =>
      envelope(
        `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","annotations":{${repeatWithin(BUDGET, (i) => `"runtime-file-posture${i}":"x"`)}}}}`,
        { group: '', version: 'v1', kind: 'Namespace' },
      ),
  },
  {
    name: 'node-class-deep',
    body: () => {
      const depth = Math.floor(BUDGET / 20);
      return envelope(
        `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"n"},"spec":{"metadataOptions":${'{"metadataOptions":'.repeat(depth)}1${'}'.repeat(depth)}}}`,
        { group: 'karpenter.k8s.aws', version: 'v1', kind: 'EC2NodeClass' },
      );
    },
  },
  {
    name: 'node-class-many-keys',
    body: () =>
      envelope(
        `{"apiVersion":"karpenter.k8s.aws/v1","kind":"EC2NodeClass","metadata":{"name":"n"},"spec":{${repeatWithin(BUDGET, (i) => `"k${i}":{"metadataOptions":{"httpTokens":"optional"}}`)}}}`,
        { group: 'karpenter.k8s.aws', version: 'v1', kind: 'EC2NodeClass' },
      ),
  },
  {
    // Just within the structure bounds (webhook/json-shape.ts): values, containers, keys.
    name: 'bound-distinct-strings',
    body: () =>
      policy(
        `"action":"Audit","syscalls":{"matchSyscalls":[{"syscall":[${Array.from({ length: 99_000 }, (_, i) => `"s${i}"`).join(',')}]}]}`,
      ),
  },
  {
    name: 'bound-invalid-rule-objects',
    body: () =>
      policy(
        `"action":"Block","file":{"matchPaths":[${Array.from({ length: 24_000 }, (_, i) => `{"path":"r${i}","readOnly":1}`).join(',')}]}`,
      ),
  },
  {
    name: 'bound-keys',
    body: () =>
      policy(
        Array.from(
          { length: 24 },
          (_, j) => `"s${j}":{${Array.from({ length: 2000 }, (_, i) => `"k${j}x${i}":${i}`).join(',')}}`,
        ).join(','),
      ),
  },
  {
    name: 'bound-long-keys',
    body: () =>
      policy(
        `"file":{${Array.from({ length: 2000 }, (_, i) => `"${String(i).padStart(1400, 'y')}":0`).join(',')}}`,
      ),
  },
  {
    name: 'bound-deep-arrays',
    body: () =>
      policy(
        `"process":[${Array.from({ length: 549 }, () => `${'['.repeat(90)}${']'.repeat(90)}`).join(',')}]`,
      ),
  },
];
