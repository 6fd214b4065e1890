// A structural check of every object the install description makes, for the defaults and with every file
// switched on: required fields, selectors that match their pod templates, Services and probes that name
// declared container ports, references (ServiceAccounts, volumes, Secrets, the webhook's Service) that
// resolve, and container arguments that name real rtctl commands.
import assert from 'node:assert/strict';
import { createProgram } from '../../bin/main.js';
import { buildManifests, type ManifestObject } from '../../install/manifests.js';
import { WEBHOOK_TLS_SECRET } from '../../install/names.js';
import { DEFAULT_VALUES, readValues, type InstallValues } from '../../install/values.js';

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  readinessProbe?: { httpGet?: { port: string | number } };
  livenessProbe?: { httpGet?: { port: string | number } };
  volumeMounts?: Array<{ name: string }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  serviceAccountName?: string;
  containers: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string } }>;
}
interface Workload {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const CLUSTER_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
]);
const WORKLOADS = new Set(['DaemonSet', 'Deployment']);
/** Commands the description may name before they exist; enabling one by default fails below. */
const PENDING_COMMANDS = new Set<string>();

const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

function check(objects: readonly ManifestObject[], values: InstallValues): void {
  const ns = values.namespace;
  const find = (kind: string, name: string): ManifestObject | undefined =>
    objects.find((o) => o['kind'] === kind && (o['metadata'] as { name: string }).name === name);
  const workloads = objects.filter((o) => WORKLOADS.has(String(o['kind']))) as unknown as Workload[];
  const keys = new Set<string>();
  for (const o of objects) {
    const md = o['metadata'] as { name?: string; namespace?: string; labels?: Record<string, string> };
    const where = `${String(o['kind'])}/${md.name}`;
    assert.match(String(o['apiVersion']), /^([a-z0-9.-]+\/)?v\d+(beta\d+)?$/, where);
    assert.ok(md.name !== undefined && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(md.name), where);
    assert.equal(md.namespace, CLUSTER_KINDS.has(String(o['kind'])) ? undefined : ns, `${where} namespace`);
    const key = `${String(o['kind'])}/${md.namespace ?? ''}/${md.name}`;
    assert.ok(!keys.has(key), `duplicate ${key}`);
    keys.add(key);
  }
  for (const w of workloads) {
    const where = `${w.kind}/${w.metadata.name}`;
    const pod = w.spec.template.spec;
    assert.ok(matches(w.spec.selector.matchLabels, w.spec.template.metadata.labels), `${where} selector`);
    assert.ok(Object.keys(w.spec.selector.matchLabels).length > 0, `${where} empty selector`);
    // No other workload's pods fall under this selector.
    for (const other of workloads.filter((x) => x !== w))
      assert.ok(
        !matches(w.spec.selector.matchLabels, other.spec.template.metadata.labels),
        `${where} overlaps`,
      );
    assert.ok(pod.serviceAccountName && find('ServiceAccount', pod.serviceAccountName), `${where} SA`);
    const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
    for (const c of pod.containers) {
      const cw = `${where}/${c.name}`;
      assert.ok(c.resources?.requests?.['memory'] && c.resources.limits?.['memory'], `${cw} resources`);
      assert.ok(c.securityContext, `${cw} securityContext`);
      assert.notEqual(c.securityContext['privileged'], true, `${cw} privileged`);
      const portNames = new Set((c.ports ?? []).map((p) => p.name));
      for (const probe of [c.readinessProbe, c.livenessProbe]) {
        assert.ok(probe?.httpGet, `${cw} probes`);
        assert.ok(
          portNames.has(String(probe.httpGet.port)),
          `${cw} probe port ${String(probe.httpGet.port)}`,
        );
      }
      for (const m of c.volumeMounts ?? []) assert.ok(volumes.has(m.name), `${cw} mount ${m.name}`);
      assert.deepEqual(c.command, ['rtctl'], cw);
    }
  }
  for (const svc of objects.filter((o) => o['kind'] === 'Service')) {
    const spec = svc['spec'] as { selector: Record<string, string>; ports: Array<{ targetPort: string }> };
    const backing = workloads.filter((w) => matches(spec.selector, w.spec.template.metadata.labels));
    const where = `Service/${(svc['metadata'] as { name: string }).name}`;
    assert.equal(backing.length, 1, `${where} selects one workload`);
    const names = new Set(
      backing[0]?.spec.template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name),
    );
    for (const p of spec.ports) assert.ok(names.has(p.targetPort), `${where} targetPort ${p.targetPort}`);
  }
  for (const pdb of objects.filter((o) => o['kind'] === 'PodDisruptionBudget')) {
    const sel = (pdb['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    assert.equal(workloads.filter((w) => matches(sel, w.spec.template.metadata.labels)).length, 1);
  }
  for (const b of objects.filter((o) => String(o['kind']).endsWith('Binding'))) {
    const roleRef = b['roleRef'] as { kind: string; name: string };
    assert.ok(find(roleRef.kind, roleRef.name), `${String(b['kind'])} roleRef`);
    for (const s of b['subjects'] as Array<{ name: string; namespace: string }>) {
      assert.ok(find('ServiceAccount', s.name), `subject ${s.name}`);
      assert.equal(s.namespace, ns);
    }
  }
  const vwc = find('ValidatingWebhookConfiguration', 'rtctl-webhook');
  assert.ok(vwc);
  for (const hook of vwc['webhooks'] as Array<{
    clientConfig: { service: { name: string; port: number } };
  }>) {
    const svc = find('Service', hook.clientConfig.service.name);
    assert.ok(svc, 'webhook Service');
    const ports = (svc['spec'] as { ports: Array<{ port: number }> }).ports.map((p) => p.port);
    assert.ok(ports.includes(hook.clientConfig.service.port));
  }
  const webhook = workloads.find((w) => w.metadata.name === 'rtctl-webhook');
  assert.ok(webhook?.spec.template.spec.volumes?.some((v) => v.secret?.secretName === WEBHOOK_TLS_SECRET));
  const cert = find('Certificate', 'rtctl-webhook');
  if (values.webhook.certManager) {
    assert.equal((cert?.['spec'] as { secretName: string }).secretName, WEBHOOK_TLS_SECRET);
    const inject = (vwc['metadata'] as { annotations: Record<string, string> }).annotations;
    assert.equal(inject['cert-manager.io/inject-ca-from'], `${ns}/rtctl-webhook`);
  } else assert.equal(cert, undefined);
}

const programs = new Map<string, ReturnType<typeof createProgram>>();

async function commandPathOf(args: readonly string[]): Promise<string | undefined> {
  const first = args[0] ?? '';
  const program = await (programs.get(first) ?? programs.set(first, createProgram(first)).get(first));
  if (program === undefined) return undefined;
  let cmd = program.commands.find((c) => c.name() === args[0]);
  const names = [args[0]];
  for (const a of args.slice(1)) {
    if (a.startsWith('-')) break;
    const sub = cmd?.commands.find((c) => c.name() === a);
    if (sub === undefined) break;
    cmd = sub;
    names.push(a);
  }
  if (cmd === undefined || cmd.commands.length > 0) return undefined;
  // Every --flag given must be an option of that command.
  for (const a of args.filter((x) => x.startsWith('--'))) {
    const flag = a.split('=')[0];
    if (!cmd.options.some((o) => o.long === flag)) return undefined;
  }
  return names.join(' ');
}

const ALL_ON = readValues({ controller: { enabled: true }, relay: { enabled: true } }).values;

describe('install: structure of every generated object', () => {
  for (const [name, values] of [
    ['defaults', DEFAULT_VALUES],
    ['every file on', ALL_ON],
    ['certificate without cert-manager', readValues({ webhook: { certManager: false } }).values],
  ] as const) {
    it(`objects are well-formed and consistent (${name})`, () => check(buildManifests(values), values));
  }

  it('every container runs a real rtctl command with real options (pending ones off by default)', async function () {
    this.timeout(60000);
    const pending: string[] = [];
    for (const [values, pendingAllowed] of [
      [DEFAULT_VALUES, false],
      [ALL_ON, true],
    ] as const) {
      for (const o of buildManifests(values).filter((x) => WORKLOADS.has(String(x['kind'])))) {
        for (const c of (o as unknown as Workload).spec.template.spec.containers) {
          const args = c.args ?? [];
          const path = await commandPathOf(args);
          if (path !== undefined) continue;
          const named = args.filter((a) => !a.startsWith('-')).join(' ');
          assert.ok(pendingAllowed && PENDING_COMMANDS.has(named), `${c.name}: rtctl ${args.join(' ')}`);
          pending.push(named);
        }
      }
    }
    assert.deepEqual(pending, []);
  });

  it('the enforcer is not privileged, shares the host PID namespace and tolerates every taint by default', () => {
    const ds = buildManifests(DEFAULT_VALUES).find(
      (o) => o['kind'] === 'DaemonSet',
    ) as unknown as Workload & {
      spec: { template: { spec: { hostPID: boolean; tolerations: unknown[] } } };
    };
    assert.equal(ds.spec.template.spec.hostPID, true);
    assert.deepEqual(ds.spec.template.spec.tolerations, [{ operator: 'Exists' }]);
    const sc = ds.spec.template.spec.containers[0]?.securityContext as {
      privileged: boolean;
      capabilities: { drop: string[]; add: string[] };
    };
    assert.equal(sc.privileged, false);
    assert.deepEqual(sc.capabilities.drop, ['ALL']);
    assert.ok(sc.capabilities.add.includes('SYS_ADMIN') && sc.capabilities.add.includes('BPF'));
  });
});
