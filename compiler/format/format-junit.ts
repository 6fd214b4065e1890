// JUnit XML: one test suite per file, one test case per policy document; a document's errors become its
// failure (warnings are listed in system-out), so CI dashboards show which policy broke.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { escapeControl } from './escape-control.js';

/** Characters XML 1.0 cannot carry at all. */
// eslint-disable-next-line no-control-regex
const XML_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

/** Escapes text for XML attributes and content. */
export function escapeXml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(XML_FORBIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function line(d: Diagnostic): string {
  const file = escapeControl(d.file);
  const loc = d.start === undefined ? file : `${file}:${d.start.line}:${d.start.column}`;
  return `${loc}: ${d.severity} ${d.code} ${escapeControl(d.message)}`;
}

/** Formats diagnostics as JUnit XML; `files` lists every file linted (clean files become passing cases). */
export function formatJunit(diagnostics: readonly Diagnostic[], files: readonly string[]): string {
  const byFile = new Map<string, Diagnostic[]>();
  for (const f of files) byFile.set(f, []);
  for (const d of diagnostics) {
    if (d.severity === 'info') continue;
    const list = byFile.get(d.file) ?? [];
    list.push(d);
    byFile.set(d.file, list);
  }
  const suites: string[] = [];
  let totalTests = 0;
  let totalFailures = 0;
  for (const [file, diags] of [...byFile.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const byDoc = new Map<number, Diagnostic[]>();
    for (const d of diags) byDoc.set(d.document, [...(byDoc.get(d.document) ?? []), d]);
    if (byDoc.size === 0) byDoc.set(0, []);
    const cases: string[] = [];
    let failures = 0;
    for (const [doc, ds] of [...byDoc.entries()].sort(([a], [b]) => a - b)) {
      const errors = ds.filter((d) => d.severity === 'error');
      const warnings = ds.filter((d) => d.severity === 'warning');
      let body = '';
      if (errors.length > 0) {
        failures++;
        const first = errors[0];
        body += `<failure message="${escapeXml(first === undefined ? '' : `${first.code} ${escapeControl(first.message)}`)}" type="${escapeXml(errors.map((e) => e.code).join(','))}">${escapeXml(errors.map(line).join('\n'))}</failure>`;
      }
      if (warnings.length > 0) body += `<system-out>${escapeXml(warnings.map(line).join('\n'))}</system-out>`;
      cases.push(
        `    <testcase classname="${escapeXml(escapeControl(file))}" name="${escapeXml(escapeControl(`${file}#document-${doc}`))}">${body}</testcase>`,
      );
    }
    totalTests += cases.length;
    totalFailures += failures;
    suites.push(
      `  <testsuite name="${escapeXml(escapeControl(file))}" tests="${cases.length}" failures="${failures}" errors="0">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="rtctl lint" tests="${totalTests}" failures="${totalFailures}" errors="0">\n${suites.join('\n')}\n</testsuites>\n`;
}
