// A name for one process over the machine's whole uptime and across boots: the boot id, the pid and the
// process's start time (clock ticks since boot, field 22 of /proc/<pid>/stat). A pid reused later has another
// start time; a later boot has another boot id.
import { readFileSync } from 'node:fs';

/** The start time field of a `/proc/<pid>/stat` text, or undefined when the text is not one. */
export function startTimeOfStat(stat: string): string | undefined {
  // The command name (field 2) is in parentheses and may hold spaces and parentheses: count after the last `)`.
  const close = stat.lastIndexOf(')');
  if (close === -1) return undefined;
  const fields = stat.slice(close + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^[0-9]+$/.test(start) ? start : undefined;
}

/** `<boot id>:<pid>:<start time>` of a running process, or undefined when /proc cannot tell (gone, another pid namespace). */
export function processIdentity(pid: number, proc = '/proc'): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const boot = readFileSync(`${proc}/sys/kernel/random/boot_id`, 'utf8').trim();
    const start = startTimeOfStat(readFileSync(`${proc}/${pid}/stat`, 'utf8'));
    if (start === undefined || !/^[0-9a-f-]{1,64}$/.test(boot)) return undefined;
    return `${boot}:${pid}:${start}`;
  } catch {
    return undefined;
  }
}
