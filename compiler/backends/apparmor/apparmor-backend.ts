// The `apparmor` backend: one AppArmor profile per pod workload set, the posture include files, and
// profiles.json telling the enforcer which profile belongs to which namespace and selector
// (docs/apparmor.md).
import { Code } from '../../diagnostics/codes/code.js';
import type { Backend, BackendInput, BackendOutput } from '../backend.js';
import type { Artifact } from '../backend.js';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { createBackendDiagnostic, findDocumentIndex } from './backend-diagnostic.js';
import { POSTURE_AUDIT_RULES, emitApparmorProfile } from './emit-apparmor-profile.js';
import { groupWorkloadSets } from './group-workload-sets.js';
import { EnforcementTarget, getTargetInfo, isKindCarried } from '../../enforcement/enforcement-table.js';

/** Emits the AppArmor profiles of a rule set. */
export function emitApparmorProfiles(input: BackendInput): BackendOutput {
  const diagnostics: Diagnostic[] = [];
  const artifacts: Artifact[] = [];
  for (const policy of input.ruleSet.policies) {
    if (isKindCarried(EnforcementTarget.Apparmor, policy.kind)) continue;
    diagnostics.push(
      createBackendDiagnostic(
        Code.apparmorHostPolicy,
        `${policy.kind} ${policy.name} is not compiled to AppArmor (${getTargetInfo(EnforcementTarget.Apparmor).kindsNote ?? ''})`,
        policy.location,
        findDocumentIndex(input.documents, policy),
      ),
    );
  }
  const sets = groupWorkloadSets(input.ruleSet.policies);
  for (const set of sets) {
    const profile = emitApparmorProfile(set, input.documents);
    artifacts.push({ path: `apparmor/${profile.name}`, content: profile.text });
    diagnostics.push(...profile.diagnostics);
  }
  const index = sets.map((s) => ({
    profile: s.name,
    namespace: s.namespace,
    matchLabels: s.matchLabels,
    matchExpressions: s.matchExpressions,
    policies: s.policies.map((p) => p.name),
  }));
  // The posture includes the enforcer installs as /etc/apparmor.d/rtctl/posture/<namespace>/<class>.
  for (const [cls, rule] of Object.entries(POSTURE_AUDIT_RULES)) {
    artifacts.push({
      path: `apparmor/postures/audit/${cls}`,
      content: `# ${cls} posture audit: allowed, the eBPF monitor alerts\n${rule}\n`,
    });
    artifacts.push({
      path: `apparmor/postures/block/${cls}`,
      content: `# ${cls} posture block: unlisted operations are denied\n`,
    });
  }
  artifacts.push({ path: 'apparmor/profiles.json', content: `${JSON.stringify(index, null, 2)}\n` });
  return { artifacts, diagnostics };
}

/** The `apparmor` target. */
export const APPARMOR_BACKEND: Backend = {
  name: 'apparmor',
  description: 'AppArmor profiles, one per pod workload set (docs/apparmor.md)',
  emit: emitApparmorProfiles,
};
