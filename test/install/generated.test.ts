// The kustomize base (deploy/) and the chart (charts/rtctl/) are what the install description generates
// (`npm run gen`), kubectl kustomize renders the base, and the chart renders to the same objects as the base
// for the default values and to the description's objects for other values.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { buildManifests, type ManifestObject } from '../../install/manifests.js';
import { generateInstallFiles } from '../../install/render/generated-files.js';
import { DEFAULT_VALUES, readValues, type InstallValues } from '../../install/values.js';
import { hasCommand, requirePrereqs } from '../support/prereq.js';
import { REPO_ROOT } from '../support/paths.js';
import { renderTemplate } from './support/mini-helm.js';

const keyOf = (o: ManifestObject): string => {
  const md = o['metadata'] as { name?: string; namespace?: string } | undefined;
  return `${String(o['kind'])}/${md?.namespace ?? ''}/${md?.name ?? ''}`;
};

function byKey(objects: readonly ManifestObject[]): Map<string, unknown> {
  // Through JSON so both sides compare as plain data.
  return new Map(objects.map((o) => [keyOf(o), JSON.parse(JSON.stringify(o)) as unknown]));
}

function renderChart(values: Record<string, unknown>, namespace: string): ManifestObject[] {
  const dir = path.join(REPO_ROOT, 'charts/rtctl/templates');
  return readdirSync(dir)
    .sort()
    .flatMap((f) => renderTemplate(readFileSync(path.join(dir, f), 'utf8'), values, namespace));
}

const withoutClusterSetup = (objects: readonly ManifestObject[]): ManifestObject[] =>
  objects.filter((o) => o['kind'] !== 'CustomResourceDefinition' && o['kind'] !== 'Namespace');

describe('install: generated kustomize base and Helm chart', () => {
  for (const f of generateInstallFiles()) {
    it(`${f.path} is up to date (npm run gen)`, () => {
      assert.equal(readFileSync(path.join(REPO_ROOT, f.path), 'utf8'), f.content);
    });
  }

  it('no stale file lingers in deploy/ or charts/rtctl/templates/', () => {
    const wanted = new Set(generateInstallFiles().map((f) => f.path));
    for (const dir of ['deploy', 'charts/rtctl/templates']) {
      for (const e of readdirSync(path.join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })) {
        const p = path.relative(REPO_ROOT, path.join(e.parentPath, e.name));
        if (e.isFile() && /\.(yaml|lua)$/.test(p)) assert.ok(wanted.has(p), p);
      }
    }
  });

  it('the CRDs of the base equal the chart crds/ the compiler writes', () => {
    for (const f of readdirSync(path.join(REPO_ROOT, 'charts/rtctl/crds'))) {
      const chart = parse(readFileSync(path.join(REPO_ROOT, 'charts/rtctl/crds', f), 'utf8')) as unknown;
      const base = parse(readFileSync(path.join(REPO_ROOT, 'deploy/crds', f), 'utf8')) as unknown;
      assert.deepEqual(base, chart, f);
    }
  });

  it('kubectl kustomize deploy/ renders exactly the objects of the default values', function () {
    requirePrereqs(this, [[hasCommand('kubectl'), 'kubectl']]);
    const out = execFileSync('kubectl', ['kustomize', path.join(REPO_ROOT, 'deploy')], { encoding: 'utf8' });
    const rendered = parseAllDocuments(out).map((d) => d.toJS() as ManifestObject);
    assert.deepEqual(byKey(rendered), byKey(buildManifests(DEFAULT_VALUES)));
  });

  it('the chart with its values.yaml renders the objects of the base (but the CRDs in crds/ and the namespace)', () => {
    const values = parse(readFileSync(path.join(REPO_ROOT, 'charts/rtctl/values.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      byKey(renderChart(values, DEFAULT_VALUES.namespace)),
      byKey(withoutClusterSetup(buildManifests(DEFAULT_VALUES))),
    );
  });

  const cases: Array<{ name: string; input: Record<string, unknown> }> = [
    {
      name: 'relay off, controller on, Ignore, 3 replicas, other namespace and image',
      input: {
        namespace: 'sec',
        image: 'registry.example/rtctl@sha256:0123',
        relay: { enabled: false },
        controller: { enabled: true },
        webhook: { failurePolicy: 'Ignore', replicas: 3, timeoutSeconds: 10, certManager: false },
      },
    },
    {
      name: 'only tainted GPU nodes tolerated, other resources',
      input: {
        clusterName: 'prod-eu',
        enforcer: {
          dataPlane: 'fanotify',
          tolerations: [{ key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
          resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } },
        },
      },
    },
  ];
  for (const c of cases) {
    it(`the chart and the description agree with other values: ${c.name}`, () => {
      const { values, errors } = readValues(c.input);
      assert.deepEqual(errors, []);
      const chartValues: Record<string, unknown> = { ...values };
      delete chartValues['namespace'];
      assert.deepEqual(
        byKey(renderChart(chartValues, values.namespace)),
        byKey(withoutClusterSetup(buildManifests(values))),
      );
    });
  }

  it('a values mistake names its path', () => {
    const { errors } = readValues({
      webhook: { failurePolicy: 'Maybe', replicas: 0 },
      namespace: 'Not_A_Label',
      relay: { enabled: 'yes' },
      extra: 1,
    });
    assert.deepEqual(errors.map((e) => e.path).sort(), [
      'extra',
      'namespace',
      'relay.enabled',
      'webhook.failurePolicy',
      'webhook.replicas',
    ]);
  });

  it('the defaults pass their own checks', () => {
    const { values, errors } = readValues({});
    assert.deepEqual(errors, []);
    assert.deepEqual(values, DEFAULT_VALUES satisfies InstallValues);
  });
});
