// Escaping for SELinux CIL file contexts. A filecon path is a POSIX extended regular expression inside
// a CIL double-quoted string, and file_contexts lines split on whitespace, so only printable ASCII
// without space and double quote can be written; regex metacharacters are backslash-escaped.

const REGEX_META = new Set(['.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\']);

/** True when every character of the text can appear in a file context exactly. */
export function isRepresentableInFileContext(text: string): boolean {
  return /^[\x21\x23-\x7e]*$/.test(text);
}

/** The regex matching exactly the literal text (the caller checked it is representable). */
export function escapeRegexLiteral(text: string): string {
  let out = '';
  for (const ch of text) out += REGEX_META.has(ch) ? `\\${ch}` : ch;
  return out;
}

/** The regex of a glob: `**` → `.*`, `*` → `[^/]*`, `?` → `[^/]`, the rest literal. */
export function convertGlobToRegex(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const ch = glob[i] ?? '';
    if (ch === '*') {
      let j = i;
      while (glob[j] === '*') j++;
      out += j - i >= 2 ? '.*' : '[^/]*';
      i = j;
      continue;
    }
    out += ch === '?' ? '[^/]' : escapeRegexLiteral(ch);
    i++;
  }
  return out;
}

/** A CIL identifier built from a name: `[a-z0-9_]`, other characters as `_`. */
export function toCilIdentifier(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}
