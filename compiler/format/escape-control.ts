// Control characters in text reports: a file named "a.yaml\nb.yaml:1:1: error RT0000 forged" must not print
// as two findings. Paths and messages are shown with C0, DEL and C1 characters written as escapes.

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `s` with every control character written as `\n`, `\r`, `\t` or `\uNNNN`; backslashes are left as they are. */
export function escapeControl(s: string): string {
  return s.replace(CONTROL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
