// Generated policies with one finding per line, to measure and bound the cost of locating findings
// (issue 12 item 8): unknown keys in one mapping, and relative paths in one long list.

const HEAD = [
  'apiVersion: security.runtime.com/v1',
  'kind: RuntimePolicy',
  'metadata: {name: many, namespace: ns}',
  'spec:',
  '  selector: {matchLabels: {app: a}}',
];

/** A policy whose `spec` holds `count` unknown keys: `count` findings in one mapping. */
export function policyWithUnknownKeys(count: number): string {
  const lines = [...HEAD, '  process: {matchPaths: [{path: /bin/sh}]}', '  action: Block'];
  for (let i = 0; i < count; i++) lines.push(`  unknown${i}: ${i}`);
  return `${lines.join('\n')}\n`;
}

/** A policy whose one list holds `count` relative paths: `count` findings in one sequence. */
export function policyWithRelativePaths(count: number): string {
  const lines = [...HEAD, '  action: Block', '  file:', '    matchPaths:'];
  for (let i = 0; i < count; i++) lines.push(`      - path: relative/${i}`);
  return `${lines.join('\n')}\n`;
}
