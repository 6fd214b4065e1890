// The five lint output formats over the same findings: text code frames, JSON fields, SARIF 2.1.0 shape,
// JUnit XML structure and escaping, GitHub workflow commands and their escaping.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { escapeGithubData, escapeGithubProperty, formatGithub } from '../../compiler/format/format-github.js';
import { formatJson } from '../../compiler/format/format-json.js';
import { formatJunit } from '../../compiler/format/format-junit.js';
import { formatSarif } from '../../compiler/format/format-sarif.js';
import { formatText } from '../../compiler/format/format-text.js';
import { lintTexts } from '../../compiler/lint.js';
import { COMPILER_FIXTURES } from '../support/paths.js';
import '../support/property-seed.js';

const file = 'invalid/RT3004-conflicting-actions.yaml';
const text = readFileSync(path.join(COMPILER_FIXTURES, file), 'utf8');
const clean = 'valid/every-field.yaml';
const cleanText = readFileSync(path.join(COMPILER_FIXTURES, clean), 'utf8');
// The clean file uses every field, some of which some targets do not enforce (RT3016, RT3018): those warnings
// are not what this test formats.
const diagnostics = lintTexts([
  { file, text },
  { file: clean, text: cleanText },
]).diagnostics.filter((d) => d.code !== 'RT3016' && d.code !== 'RT3018');

describe('lint output formats', () => {
  it('has the conflict on both sides to format', () => {
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.start?.line]),
      [
        ['RT3004', 11],
        ['RT3004', 24],
      ],
    );
  });

  it('text: location, code, message, a caret under the node, the related place and a summary', () => {
    const out = formatText(diagnostics, { texts: new Map([[file, text]]) });
    assert.match(out, /^invalid\/RT3004-conflicting-actions\.yaml:11:9: error RT3004 /m);
    assert.match(out, /^> 11 \| {7}- path: \/usr\/bin\/curl/m);
    assert.match(out, /^ {5}\| {9}\^+$/m); // the caret sits under the rule, column 9
    assert.match(out, /invalid\/RT3004-conflicting-actions\.yaml:24:9: the Allow rule/);
    assert.match(out, /2 errors, 0 warnings\n$/);
  });

  it('json: an array of objects with code, severity, message, file, line, column, path', () => {
    const parsed = JSON.parse(formatJson(diagnostics)) as Array<Record<string, unknown>>;
    assert.equal(parsed.length, 2);
    assert.deepEqual(
      {
        code: parsed[0]?.['code'],
        severity: parsed[0]?.['severity'],
        file: parsed[0]?.['file'],
        line: parsed[0]?.['line'],
        column: parsed[0]?.['column'],
        path: parsed[0]?.['path'],
      },
      { code: 'RT3004', severity: 'error', file, line: 11, column: 9, path: 'spec.process.matchPaths[0]' },
    );
    assert.equal(typeof parsed[0]?.['message'], 'string');
  });

  it('sarif: version 2.1.0, rules for every code, results with regions and related locations', () => {
    const log = JSON.parse(formatSarif(diagnostics, { version: '0.1.0', baseDir: '.' })) as {
      version: string;
      runs: Array<{
        tool: { driver: { name: string; rules: Array<{ id: string }> } };
        results: Array<Record<string, unknown>>;
      }>;
    };
    assert.equal(log.version, '2.1.0');
    const run = log.runs[0];
    assert.ok(run !== undefined);
    assert.equal(run.tool.driver.name, 'rtctl');
    assert.ok(run.tool.driver.rules.some((r) => r.id === 'RT3004'));
    const result = run.results[0] as {
      ruleId: string;
      ruleIndex: number;
      level: string;
      locations: Array<{
        physicalLocation: {
          artifactLocation: { uri: string };
          region: { startLine: number; startColumn: number };
        };
      }>;
      relatedLocations: unknown[];
    };
    assert.equal(result.ruleId, 'RT3004');
    assert.equal(run.tool.driver.rules[result.ruleIndex]?.id, 'RT3004');
    assert.equal(result.level, 'error');
    assert.equal(
      result.locations[0]?.physicalLocation.artifactLocation.uri,
      'invalid/RT3004-conflicting-actions.yaml',
    );
    assert.deepEqual(result.locations[0]?.physicalLocation.region.startLine, 11);
    assert.equal(result.relatedLocations.length, 1);
  });

  it('junit: well-formed XML, one failing case for the file with errors and a passing one for the clean file', () => {
    const xml = formatJunit(diagnostics, [file, clean]);
    assert.equal(XMLValidator.validate(xml), true);
    assert.match(xml, /<testsuites name="rtctl lint" tests="3" failures="2"/);
    assert.match(
      xml,
      /<testcase classname="valid\/every-field.yaml" name="valid\/every-field.yaml#document-0"><\/testcase>/,
    );
  });

  it('junit: escapes markup and control characters in messages', () => {
    const xml = formatJunit(
      [
        {
          code: 'RT2005',
          severity: 'error',
          message: 'bad <value> & "quote" \u0001',
          file: 'a&b.yaml',
          pointer: '',
          document: 0,
        },
      ],
      ['a&b.yaml'],
    );
    assert.equal(XMLValidator.validate(xml), true);
    assert.match(xml, /bad &lt;value&gt; &amp; &quot;quote&quot; \\u0001/);
  });

  it('every format: a file name with a newline cannot forge a finding line', () => {
    const forged = 'a.yaml\nb.yaml:1:1: error RT0000 forged\u001b[2J';
    const d = [
      {
        code: 'RT1012',
        severity: 'error' as const,
        message: `cannot read ${forged}: EACCES`,
        file: forged,
        pointer: '',
        document: 0,
      },
    ];
    const outputs = {
      text: formatText(d, { texts: new Map(), verbose: false, color: false }),
      json: formatJson(d),
      sarif: formatSarif(d, { version: '0' }),
      junit: formatJunit(d, [forged]),
      github: formatGithub(d, { baseDir: '/' }),
    };
    for (const [name, out] of Object.entries(outputs)) {
      for (const l of out.split('\n')) assert.doesNotMatch(l, /^\s*b\.yaml:1:1/, `${name}: ${l}`);
      assert.equal(out.includes('\u001b'), false, name);
    }
    assert.match(outputs.text, /^a\.yaml\\nb\.yaml:1:1: error RT0000 forged\\u001b\[2J: error RT1012 /);
  });

  it('github: one workflow command per finding with file, line, col and the code as title', () => {
    const out = formatGithub(diagnostics, { baseDir: '/' });
    const lines = out.split('\n');
    assert.equal(lines.length, 4, out); // two commands, the summary, the final newline
    assert.match(
      lines[0] ?? '',
      /^::error file=invalid\/RT3004-conflicting-actions\.yaml,line=11,col=9,(endLine=\d+,(endColumn=\d+,)?)?title=RT3004::Process path "\/usr\/bin\/curl" is Block here /,
    );
    // The related place rides in the message after an encoded newline, never on a line of its own.
    assert.match(lines[0] ?? '', /%0Ainvalid\/RT3004-conflicting-actions\.yaml:24:9: the Allow rule$/);
    assert.match(lines[1] ?? '', /^::error file=[^,]+,line=24,col=9,/);
    assert.equal(lines[2], '2 errors, 0 warnings');
    const warn = formatGithub(
      diagnostics.slice(0, 1).map((d) => ({ ...d, severity: 'warning' as const })),
      { baseDir: '/' },
    );
    assert.match(warn, /^::warning file=/);
  });

  it('github: file names relative to the workspace; info only with verbose, as notice', () => {
    const info = {
      code: 'RT1013',
      severity: 'info' as const,
      message: 'passed over',
      file: '/ws/p/a.yaml',
      pointer: '',
      document: 0,
    };
    assert.equal(formatGithub([info], { baseDir: '/ws' }), '0 errors, 0 warnings\n');
    assert.equal(
      formatGithub([info], { baseDir: '/ws', verbose: true }),
      '::notice file=p/a.yaml,title=RT1013::passed over\n0 errors, 0 warnings\n',
    );
  });

  it('github: escaping per the runner (%, CR, LF in data; also : and , in properties)', () => {
    assert.equal(
      escapeGithubData('100% a\\r\\nb:c,d'.replace('\\r', '\r').replace('\\n', '\n')),
      '100%25 a%0D%0Ab:c,d',
    );
    assert.equal(escapeGithubProperty('a%b\r\n:c,d'), 'a%25b%0D%0A%3Ac%2Cd');
  });

  it('github: property: any file name and message decode back to themselves and stay one command', () => {
    // The runner's parser: `::cmd k=v,k=v::data`; properties split at `,`, then at the first `=`.
    const unescape = (s: string): string =>
      s
        .replace(/%2C/g, ',')
        .replace(/%3A/g, ':')
        .replace(/%0A/g, '\n')
        .replace(/%0D/g, '\r')
        .replace(/%25/g, '%');
    const chars = fc.constantFrom('a', 'b', '%', ':', ',', '\r', '\n', '=', ' ', '2', '5', 'C', 'A', '0');
    const text = fc.array(chars, { minLength: 1, maxLength: 30 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, text, (file, message) => {
        const out = formatGithub(
          [{ code: 'RT2003', severity: 'error', message, file: `p/${file}`, pointer: '', document: 0 }],
          { baseDir: '/nonexistent-base' },
        );
        const lines = out.split('\n');
        assert.equal(lines.length, 3);
        const m = /^::error ([^:]*)::(.*)$/.exec(lines[0] ?? '');
        assert.ok(m, lines[0]);
        const props = new Map(
          (m[1] ?? '')
            .split(',')
            .map((kv) => [kv.slice(0, kv.indexOf('=')), unescape(kv.slice(kv.indexOf('=') + 1))]),
        );
        assert.equal(unescape(m[2] ?? ''), message);
        assert.equal(props.get('title'), 'RT2003');
        assert.equal(props.get('file'), `p/${file}`);
      }),
    );
  });
});
