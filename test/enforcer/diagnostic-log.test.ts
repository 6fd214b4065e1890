// The enforcer logs the findings of its policies once per distinct set (issue 12 item 8): the directory
// source rescans every few seconds, and an unchanged set of findings must not be logged again.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { Diagnostic } from '../../compiler/diagnostics/diagnostic.js';
import { createDiagnosticLog } from '../../enforcer/diagnostic-log.js';

function capture(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

const finding = (code: string, line: number): Diagnostic => ({
  code,
  severity: 'error',
  message: `${code} at line ${line}`,
  file: 'p.yaml',
  pointer: '/spec',
  document: 0,
  start: { line, column: 1, offset: 0 },
});

describe('diagnostic log of the policy sources', () => {
  it('logs a set once, again when it changes, and not for a repeat of the same set', () => {
    const { lines, logger } = capture();
    const log = createDiagnosticLog(logger);
    const first = [finding('RT3001', 4), finding('RT2001', 9)];
    assert.equal(log(first), true);
    assert.equal(log([...first]), false, 'the same set on a rescan');
    assert.equal(log([finding('RT3001', 5), finding('RT2001', 9)]), true, 'a finding moved');
    assert.equal(log([]), true, 'the findings went away');
    assert.equal(log([]), false);
    assert.equal(lines.length, 4, 'two findings, then two findings again, then nothing');
    assert.ok(lines.every((l) => (JSON.parse(l) as { level: number }).level === 40));
  });
});
