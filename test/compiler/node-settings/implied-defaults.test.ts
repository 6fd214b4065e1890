// Every default and implied value the node-kinds table relies on, one fixture each (test/fixtures/node-settings):
// `rtctl lint` (lintTexts) must report exactly the codes the file name ends in, and every fixture must name
// the tool's source file that the table row cites.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintTexts } from '../../../compiler/lint.js';
import { NODE_KINDS } from '../../../compiler/node-settings/node-kinds.js';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/node-settings');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

function expectedCodes(file: string): string[] {
  const m = /\.((?:RT\d{4}\+?)+|ok)\.yaml$/.exec(file);
  assert.ok(m !== null, `${file}: the name must end in .ok.yaml or .RTnnnn[+RTnnnn].yaml`);
  return m[1] === 'ok' ? [] : (m[1] ?? '').split('+').sort();
}

describe('node-settings: one fixture per default and implied value', () => {
  it('has fixtures', () => assert.ok(files.length >= 10, files.join(', ')));
  for (const file of files) {
    it(`${file} → ${expectedCodes(file).join(', ') || 'no finding'}`, () => {
      const text = readFileSync(path.join(DIR, file), 'utf8');
      const source = /^# source: (\S+ \S+)/.exec(text)?.[1];
      assert.ok(source !== undefined, 'the first line names the source file: # source: owner/repo path');
      const apiVersion = /^apiVersion: (\S+)/m.exec(text)?.[1] ?? '';
      const kind = /^kind: (\S+)/m.exec(text)?.[1] ?? '';
      const [group, version] = apiVersion.split('/');
      const rows = NODE_KINDS.filter(
        (k) => k.group === group && k.kind === kind && k.versions.includes(version ?? ''),
      );
      assert.equal(rows.length, 1, `${apiVersion} ${kind} is one row of the table`);
      const [repo, file0] = source.split(' ');
      assert.ok(
        rows[0]?.source.startsWith(repo ?? '?') &&
          rows[0].source.includes((file0 ?? '?').split('/').pop() ?? '?'),
        `the row cites ${source}: ${rows[0]?.source ?? ''}`,
      );
      const { diagnostics } = lintTexts([{ file, text }]);
      assert.deepEqual(
        diagnostics.map((d) => d.code).sort(),
        expectedCodes(file),
        diagnostics.map((d) => `${d.code} ${d.pointer}: ${d.message}`).join('\n'),
      );
    });
  }
});
