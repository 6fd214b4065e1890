// `rtctl test` reports: text (one line per case, failures with file:line:col and the deciding rule), JSON
// and JUnit XML (one test suite per suite document, one test case per case; untested policies as failures
// of a suite of their own when they are required).
import { escapeControl } from '../format/escape-control.js';
import { escapeXml } from '../format/format-junit.js';
import { describeActual, type TestRun } from './run-tests.js';

function caseTitle(suite: string, name: string): string {
  return `${suite} › ${name}`;
}

/** The text report. */
export function formatTestText(run: TestRun, requireTests: boolean): string {
  const lines: string[] = [];
  for (const r of run.results) {
    const c = r.case;
    const title = escapeControl(caseTitle(c.suite, c.name));
    if (r.failures.length === 0) {
      lines.push(`PASS ${title}`);
      continue;
    }
    lines.push(`FAIL ${escapeControl(c.file)}:${c.line}:${c.column}: ${title}: ${r.failures.join('; ')}`);
    const rule = r.actual.rule;
    lines.push(
      `     decided: ${describeActual(r.actual)}${rule === null ? '' : ` at ${escapeControl(rule.file)}:${rule.line}:${rule.column} (${rule.summary})`}`,
    );
  }
  for (const p of run.untested) {
    lines.push(
      `${requireTests ? 'FAIL' : 'NOTE'} ${escapeControl(p.file)}:${p.line}: ${p.kind} ${p.namespace === '' ? '' : `${p.namespace}/`}${p.name} has no test case`,
    );
  }
  const failed = run.results.filter((r) => r.failures.length > 0).length;
  const passed = run.results.length - failed;
  lines.push(
    `${passed} passed, ${failed} failed${run.untested.length > 0 ? `, ${run.untested.length} polic${run.untested.length === 1 ? 'y' : 'ies'} without a case` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}

/** The JSON report. */
export function formatTestJson(run: TestRun): string {
  const doc = {
    cases: run.results.map((r) => ({
      suite: r.case.suite,
      name: r.case.name,
      file: r.case.file,
      line: r.case.line,
      column: r.case.column,
      passed: r.failures.length === 0,
      failures: r.failures,
      expected: r.case.expect,
      actual: r.actual,
    })),
    untested: run.untested,
    passed: run.results.filter((r) => r.failures.length === 0).length,
    failed: run.results.filter((r) => r.failures.length > 0).length,
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The JUnit XML report. */
export function formatTestJunit(run: TestRun, requireTests: boolean): string {
  const bySuite = new Map<string, typeof run.results>();
  for (const r of run.results) bySuite.set(r.case.suite, [...(bySuite.get(r.case.suite) ?? []), r]);
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  for (const [suite, results] of bySuite) {
    const cases = results.map((r) => {
      const c = r.case;
      const body =
        r.failures.length === 0
          ? ''
          : `<failure message="${escapeXml(escapeControl(r.failures.join('; ')))}" type="decision">${escapeXml(escapeControl(`${c.file}:${c.line}:${c.column}: decided ${describeActual(r.actual)}`))}</failure>`;
      return `    <testcase classname="${escapeXml(escapeControl(suite))}" name="${escapeXml(escapeControl(c.name))}" file="${escapeXml(escapeControl(c.file))}">${body}</testcase>`;
    });
    const failed = results.filter((r) => r.failures.length > 0).length;
    tests += results.length;
    failures += failed;
    suites.push(
      `  <testsuite name="${escapeXml(escapeControl(suite))}" tests="${results.length}" failures="${failed}" errors="0">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  if (requireTests && run.untested.length > 0) {
    const cases = run.untested.map(
      (p) =>
        `    <testcase classname="untested policies" name="${escapeXml(escapeControl(`${p.kind} ${p.namespace === '' ? '' : `${p.namespace}/`}${p.name}`))}" file="${escapeXml(escapeControl(p.file))}"><failure message="no test case decides or names this policy" type="untested"/></testcase>`,
    );
    tests += cases.length;
    failures += cases.length;
    suites.push(
      `  <testsuite name="untested policies" tests="${cases.length}" failures="${cases.length}" errors="0">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="rtctl test" tests="${tests}" failures="${failures}" errors="0">\n${suites.join('\n')}\n</testsuites>\n`;
}
