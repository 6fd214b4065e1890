// Resolves a group given by name or number to its id, from /etc/group (Node has no getgrnam).
import { readFileSync } from 'node:fs';

/** The group id of a name or a decimal id; undefined when no such group exists. */
export function lookupGroupId(group: string, groupFile = '/etc/group'): number | undefined {
  if (/^\d{1,10}$/.test(group)) return Number(group);
  let text: string;
  try {
    text = readFileSync(groupFile, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  return undefined;
}
