// The installing user's permissions (docs/install.md) are the calls the installer's code makes: install,
// --verify, --cert-manager, uninstall and --purge run in-process against the recording stand-in API server (no
// real API server can run here); every request must be in the table, and every table entry must be used.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { installerCalls, renderInstallerPermissions } from '../../../install/cluster/installer-calls.js';
import { runInstall } from '../../../install/cluster/install-run.js';
import { runUninstall } from '../../../install/cluster/uninstall-run.js';
import { runVerify } from '../../../install/cluster/verify-run.js';
import { readValues } from '../../../install/values.js';
import type { StandInRequest } from '../support/stand-in-api-server.js';
import { contextFor, startCluster } from './support.js';

const key = (c: { verb: string; group: string; resource: string }): string =>
  `${c.verb} ${c.group}/${c.resource}`;

describe('installer permissions against the recording stand-in API server', function () {
  this.timeout(60_000);

  it('every request of install, --verify, --cert-manager, uninstall and --purge is in the table, and every entry is used', async () => {
    const seen: StandInRequest[] = [];
    for (const certManager of [false, true]) {
      const c = await startCluster({ certManager });
      try {
        // The second run with every component on (the controller brings a Role and RoleBinding).
        const values = readValues({ webhook: { certManager }, controller: { enabled: certManager } }).values;
        const { ctx } = contextFor(c.server);
        await runInstall(ctx, {
          values,
          certManager,
          forceConflicts: false,
          upgrade: false,
          timeoutMs: 30_000,
        });
        await runVerify(ctx, values, 30_000, () => undefined);
        await runUninstall(ctx, { values, purge: certManager, force: false, timeoutMs: 30_000 });
        // Again: a leftover release request withdrawn on install.
        await runInstall(ctx, {
          values,
          certManager,
          forceConflicts: false,
          upgrade: false,
          timeoutMs: 30_000,
        });
        seen.push(...c.server.requests);
      } finally {
        await c.close();
      }
    }
    assert.ok(seen.every((q) => q.status !== 403 && q.status !== 401));
    const table = new Set(installerCalls().map(key));
    const made = new Set(seen.map(key));
    assert.deepEqual([...made].filter((k) => !table.has(k)).sort(), [], 'requests missing from the table');
    const unused = [...table].filter((k) => !made.has(k)).sort();
    assert.deepEqual(unused, []);
  });

  it('docs/install.md lists exactly the table', async () => {
    const doc = await readFile(new URL('../../../docs/install.md', import.meta.url), 'utf8');
    assert.ok(
      doc.includes(`${renderInstallerPermissions()}\n`),
      'docs/install.md: regenerate the permissions table',
    );
  });
});
