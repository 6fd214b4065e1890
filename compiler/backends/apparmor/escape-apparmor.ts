// Escaping for AppArmor profile text. Every path is written inside double quotes, and every byte
// outside a small safe set becomes a three-digit octal escape, which apparmor_parser decodes to a
// literal character (never a glob, never a variable, never a rule separator). Only the glob
// wildcards a pattern rule means (`*`, `?`) stay unescaped.

const SAFE = /^[A-Za-z0-9/._-]$/;

function escapeByte(byte: number): string {
  return `\\${byte.toString(8).padStart(3, '0')}`;
}

/** A quoted AppArmor path matching exactly `path`. */
export function quoteApparmorPath(path: string): string {
  return quoteApparmorGlob(path, false);
}

/**
 * A quoted AppArmor path expression. With `glob`, `*` and `?` keep their wildcard meaning (runs of
 * three or more `*` are written as `**`); every other byte is literal.
 */
export function quoteApparmorGlob(text: string, glob = true): string {
  let out = '"';
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    const ch = String.fromCharCode(b);
    if (glob && ch === '*') {
      let j = i;
      while (bytes[j] === 0x2a) j++;
      out += j - i >= 2 ? '**' : '*';
      i = j - 1;
    } else if (glob && ch === '?') out += '?';
    else if (b < 0x80 && SAFE.test(ch)) out += ch;
    else out += escapeByte(b);
  }
  return `${out}"`;
}

/** Text safe inside a `#` comment: one line, printable ASCII, the rest escaped. */
export function escapeApparmorComment(text: string): string {
  let out = '';
  for (const b of Buffer.from(text, 'utf8')) {
    out += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : escapeByte(b);
  }
  return out;
}

/** A name safe as an AppArmor profile name or include path segment: `[a-z0-9-]`, else a hash stands in. */
export function isSafeApparmorName(name: string): boolean {
  return /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name);
}
