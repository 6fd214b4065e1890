// The API calls `rtctl install`, `--verify` and `rtctl uninstall` make, as one table: docs/install.md lists
// the installing user's permissions from it, and a test runs every command against the stand-in API server
// and checks each request is in the table and each entry is used (so the list cannot fall behind the code).
import type { ApiCall } from '../api-calls.js';
import { InstallStep, planInstall, planUninstall } from './install-plan.js';
import { resourceTypeOf } from './kube-resources.js';
import { DEFAULT_VALUES } from '../values.js';

/** A call and the command that makes it. */
export interface InstallerCall extends ApiCall {
  command: 'install' | 'install --verify' | 'uninstall' | 'uninstall --purge';
}

function call(
  command: InstallerCall['command'],
  verb: ApiCall['verb'],
  kind: string,
  source: string,
): InstallerCall {
  const t = resourceTypeOf(kind);
  return {
    command,
    verb,
    group: t.group,
    resource: t.resource,
    scope: t.namespaced ? 'namespace' : 'cluster',
    source,
  };
}

const INSTALL = 'install/cluster/install-run.ts';
const VERIFY = 'install/cluster/verify-run.ts';
const UNINSTALL = 'install/cluster/uninstall-run.ts';

function kindsOf(steps: ReturnType<typeof planInstall>, keep: (s: InstallStep) => boolean): string[] {
  return [
    ...new Set(steps.filter((s) => keep(s.step)).flatMap((s) => s.objects.map((o) => String(o['kind'])))),
  ];
}

/** Every call, in the order of the commands. */
export function installerCalls(): InstallerCall[] {
  const everything = planUninstall(DEFAULT_VALUES);
  const applied = kindsOf(everything, () => true);
  return [
    call('install', 'get', 'DaemonSet', `${INSTALL}: the version of an existing install`),
    call('install', 'get', 'Namespace', `${INSTALL}: whether the namespace is rtctl's`),
    call('install', 'get', 'Secret', `${INSTALL}: keep a valid webhook certificate; wait for cert-manager's`),
    ...applied.map((k) => call('install', 'patch', k, `${INSTALL}: server-side apply`)),
    call('install', 'get', 'CustomResourceDefinition', `${INSTALL}: wait until Established`),
    call('install', 'get', 'ConfigMap', `${INSTALL}: a release request left by an interrupted uninstall`),
    call('install', 'delete', 'ConfigMap', `${INSTALL}: withdraw that release request`),
    call('install', 'get', 'Deployment', `${INSTALL}: the webhook ready before its configuration`),
    call('install --verify', 'list', 'Node', `${VERIFY}: nodes without a report`),
    call('install --verify', 'list', 'ConfigMap', `${VERIFY}: the node reports`),
    call('uninstall', 'get', 'DaemonSet', `${UNINSTALL}: whether enforcers run, and how many`),
    call('uninstall', 'patch', 'ConfigMap', `${UNINSTALL}: the release request`),
    call('uninstall', 'list', 'ConfigMap', `${UNINSTALL}: the node reports, until every one says released`),
    call('uninstall', 'list', 'Node', `${UNINSTALL}: reports of nodes that left do not count`),
    call('uninstall', 'get', 'Namespace', `${UNINSTALL}: delete the namespace only when rtctl made it`),
    ...kindsOf(everything, (s) => s !== InstallStep.Crds).map((k) =>
      call('uninstall', 'delete', k, `${UNINSTALL}: reverse order`),
    ),
    call('uninstall --purge', 'delete', 'CustomResourceDefinition', `${UNINSTALL}: --purge`),
  ];
}

/** The installing user's permissions as a Markdown table (docs/install.md). */
export function renderInstallerPermissions(): string {
  const byResource = new Map<string, { scope: string; verbs: Set<string> }>();
  for (const c of installerCalls()) {
    const key = c.group === '' ? c.resource : `${c.resource}.${c.group}`;
    const e = byResource.get(key) ?? { scope: c.scope, verbs: new Set<string>() };
    e.verbs.add(c.verb);
    byResource.set(key, e);
  }
  const rows = [...byResource]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([resource, e]) =>
        `| \`${resource}\` | ${e.scope === 'cluster' ? 'cluster' : 'install namespace'} | ${[...e.verbs].sort().join(', ')} |`,
    );
  return ['| resource | scope | verbs |', '|---|---|---|', ...rows].join('\n');
}
