// The `selinux` backend: one CIL module per host node set, plus modules.json telling the enforcer which
// module belongs to which node selector (docs/selinux.md). Pod policies are not compiled to SELinux.
import type { Artifact, Backend, BackendInput, BackendOutput } from '../backend.js';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { emitCilModule } from './emit-cil-module.js';
import { groupHostSets } from './group-host-sets.js';

/** Emits the CIL modules of a rule set. */
export function emitSelinuxModules(input: BackendInput): BackendOutput {
  const artifacts: Artifact[] = [];
  const diagnostics: Diagnostic[] = [];
  const sets = groupHostSets(input.ruleSet.policies);
  for (const set of sets) {
    const module = emitCilModule(set, input.documents);
    artifacts.push({ path: `selinux/${module.name}.cil`, content: module.text });
    diagnostics.push(...module.diagnostics);
  }
  const index = sets.map((s) => ({
    module: s.name,
    nodeLabels: s.nodeLabels,
    policies: s.policies.map((p) => p.name),
  }));
  artifacts.push({ path: 'selinux/modules.json', content: `${JSON.stringify(index, null, 2)}\n` });
  return { artifacts, diagnostics };
}

/** The `selinux` target. */
export const SELINUX_BACKEND: Backend = {
  name: 'selinux',
  description: 'SELinux CIL modules for host policies, one per node set (docs/selinux.md)',
  emit: emitSelinuxModules,
};
