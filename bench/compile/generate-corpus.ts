// Generates a realistic policy corpus for benchmarks: mixed kinds and rule types, no errors, split into
// files of 100 documents as a policy repository would be. The network and capability rules (every fourth pod
// policy) draw RT3018 warnings (fanotify does not enforce them), so every file has positions to compute, as a
// real repository would.
import type { SourceText } from '../../compiler/lint.js';

const ACTIONS = ['Block', 'Audit', 'Allow'] as const;

/** The rule sections of a pod policy: four shapes in turn, so every rule type is exercised. */
function podSections(i: number): string {
  switch (i % 4) {
    case 0:
      return `  process:
    matchPaths:
      - path: /usr/bin/tool-${i}
      - path: /usr/local/bin/helper-${i}
        fromSource:
          - path: /bin/sh
    matchDirectories:
      - dir: /opt/app-${i}/bin/
        recursive: true
`;
    case 1:
      return `  file:
    matchPaths:
      - path: /etc/app-${i}/config.yaml
        readOnly: true
    matchDirectories:
      - dir: /var/lib/app-${i}/
        recursive: true
        ownerOnly: true
    matchPatterns:
      - pattern: /home/*/.app-${i}/*.key
`;
    case 2:
      return `  network:
    matchProtocols:
      - protocol: raw
        fromSource:
          - path: /usr/bin/net-${i}
  capabilities:
    matchCapabilities:
      - capability: net_raw
        fromSource:
          - path: /usr/bin/cap-${i}
`;
    default:
      return `  process:
    matchPaths:
      - execname: tool-${i}
  file:
    matchDirectories:
      - dir: /srv/app-${i}/
`;
  }
}

function podPolicy(i: number): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimePolicy
metadata:
  name: policy-${i}
  namespace: team-${i % 40}
spec:
  selector:
    matchLabels:
      app: app-${i}
  severity: ${(i % 10) + 1}
${podSections(i)}  action: ${ACTIONS[i % 3] ?? 'Block'}
`;
}

function hostPolicy(i: number): string {
  return `apiVersion: security.runtime.com/v1
kind: RuntimeHostPolicy
metadata:
  name: host-policy-${i}
spec:
  nodeSelector:
    matchLabels:
      pool: pool-${i}
  process:
    matchPaths:
      - path: /usr/sbin/daemon-${i}
    action: Audit
  file:
    matchDirectories:
      - dir: /etc/host-${i}/
        recursive: true
        readOnly: true
    action: Block
  severity: 5
`;
}

/** `count` policies in files of `perFile` documents; every tenth policy is a host policy. */
export function generateCorpus(count: number, perFile = 100): SourceText[] {
  const files: SourceText[] = [];
  for (let f = 0; f * perFile < count; f++) {
    const docs: string[] = [];
    for (let i = f * perFile; i < Math.min(count, (f + 1) * perFile); i++)
      docs.push(i % 10 === 9 ? hostPolicy(i) : podPolicy(i));
    files.push({ file: `policies/generated-${String(f).padStart(4, '0')}.yaml`, text: docs.join('---\n') });
  }
  return files;
}
