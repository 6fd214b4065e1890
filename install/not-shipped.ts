// The list of what no packaging ships of dist/ (install/not-shipped.txt), read by the Debian package's build;
// image/build.sh reads the same file.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** install/not-shipped.txt. */
export const NOT_SHIPPED_LIST = join(dirname(fileURLToPath(import.meta.url)), 'not-shipped.txt');

/** Entries of a not-shipped list: paths relative to dist/ (a folder ends in /), and `*.ext` endings. */
export interface NotShipped {
  paths: string[];
  endings: string[];
}

/** Parses the list's text; throws on an entry that is neither a relative path nor `*.ext`. */
export function parseNotShipped(text: string): NotShipped {
  const paths: string[] = [];
  const endings: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (/^\*\.[A-Za-z0-9.]+$/.test(line)) endings.push(line.slice(1));
    else if (/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/?$/.test(line) && !line.split('/').includes('..'))
      paths.push(line);
    else
      throw new Error(
        `not-shipped list line ${i + 1}: ${JSON.stringify(line)} is neither a path under dist/ nor *.ext`,
      );
  });
  return { paths, endings };
}

/** Whether `rel` (a path relative to dist/, `/`-separated) is left out by the list. */
export function isNotShipped(list: NotShipped, rel: string): boolean {
  if (list.endings.some((e) => rel.endsWith(e))) return true;
  return list.paths.some((p) => (p.endsWith('/') ? rel === p.slice(0, -1) || rel.startsWith(p) : rel === p));
}

/** The repository's list. */
export function readNotShipped(): NotShipped {
  return parseNotShipped(readFileSync(NOT_SHIPPED_LIST, 'utf8'));
}
