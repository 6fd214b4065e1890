// Generated policies with one finding per line, to measure and bound the cost of locating findings
// (issue 12 item 8): unknown keys in mappings, and relative paths in long lists. The schema bounds how much one
// document may hold (maxProperties, maxItems), so many findings in one file come as many documents of at most
// `perDocument` findings each.

const HEAD = [
  'apiVersion: security.runtime.com/v1',
  'kind: RuntimePolicy',
  'metadata: {name: many, namespace: ns}',
  'spec:',
  '  selector: {matchLabels: {app: a}}',
];

/** Splits `count` findings into documents of at most `perDocument`, each built by `document`. */
function documents(
  count: number,
  perDocument: number,
  document: (first: number, n: number) => string[],
): string {
  const docs: string[] = [];
  for (let first = 0; first < count; first += perDocument) {
    docs.push(document(first, Math.min(perDocument, count - first)).join('\n'));
  }
  return `${docs.join('\n---\n')}\n`;
}

/** Policies whose `spec` holds unknown keys: `count` findings, at most `perDocument` in one mapping. */
export function policyWithUnknownKeys(count: number, perDocument = count): string {
  return documents(count, perDocument, (first, n) => {
    const lines = [...HEAD, '  process: {matchPaths: [{path: /bin/sh}]}', '  action: Block'];
    for (let i = first; i < first + n; i++) lines.push(`  unknown${i}: ${i}`);
    return lines;
  });
}

/** Policies whose one list holds relative paths: `count` findings, at most `perDocument` in one sequence. */
export function policyWithRelativePaths(count: number, perDocument = count): string {
  return documents(count, perDocument, (first, n) => {
    const lines = [...HEAD, '  action: Block', '  file:', '    matchPaths:'];
    for (let i = first; i < first + n; i++) lines.push(`      - path: relative/${i}`);
    return lines;
  });
}
