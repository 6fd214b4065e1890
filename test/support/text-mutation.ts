// Mutations of a text for property tests of parsers (fast-check): insert one of `tokens`, delete a few
// characters, repeat a line (a duplicate key when it is a mapping entry), or change a line's indentation.
import fc from 'fast-check';
import './property-seed.js';

/** One mutation: where (`at`, taken modulo the text or its lines) and what. */
export type TextMutation =
  | { kind: 'insert'; at: number; token: string }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; at: number }
  | { kind: 'indent'; at: number; delta: number };

/** Mutations inserting `tokens` and deleting 1 to `maxDelete` characters. */
export function textMutation(tokens: fc.Arbitrary<string>, maxDelete: number): fc.Arbitrary<TextMutation> {
  return fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), token: tokens }),
    fc.record({
      kind: fc.constant('delete' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: maxDelete }),
    }),
    fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('indent' as const), at: fc.nat(), delta: fc.integer({ min: -3, max: 3 }) }),
  );
}

/** `text` with the mutation applied. */
export function mutateText(text: string, m: TextMutation): string {
  if (m.kind === 'insert' || m.kind === 'delete') {
    const at = text.length === 0 ? 0 : m.at % (text.length + 1);
    return m.kind === 'insert'
      ? text.slice(0, at) + m.token + text.slice(at)
      : text.slice(0, at) + text.slice(at + m.length);
  }
  const lines = text.split('\n');
  const i = m.at % Math.max(1, lines.length);
  const line = lines[i] ?? '';
  if (m.kind === 'duplicate') lines.splice(i, 0, line);
  else
    lines[i] = m.delta >= 0 ? ' '.repeat(m.delta) + line : line.replace(new RegExp(`^ {0,${-m.delta}}`), '');
  return lines.join('\n');
}
