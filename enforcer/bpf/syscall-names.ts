// Names of the x86-64 system calls the BPF-LSM hooks are reached from, and open flags in the
// `O_RDONLY|O_CLOEXEC` form alert records use (`Data: syscall=SYS_OPENAT fd=-100 flags=O_RDONLY`).

const SYSCALLS: Readonly<Record<number, string>> = {
  2: 'SYS_OPEN',
  41: 'SYS_SOCKET',
  42: 'SYS_CONNECT',
  44: 'SYS_SENDTO',
  46: 'SYS_SENDMSG',
  59: 'SYS_EXECVE',
  85: 'SYS_CREAT',
  257: 'SYS_OPENAT',
  322: 'SYS_EXECVEAT',
  307: 'SYS_SENDMMSG',
  437: 'SYS_OPENAT2',
};

/** `SYS_<NAME>` for a syscall number, `SYS_<n>` when not one of the hooked paths, `` when unknown. */
export function getSyscallName(nr: number): string {
  if (nr < 0) return '';
  return SYSCALLS[nr] ?? `SYS_${nr}`;
}

const OPEN_FLAGS: readonly (readonly [number, string])[] = [
  [0o100, 'O_CREAT'],
  [0o200, 'O_EXCL'],
  [0o400, 'O_NOCTTY'],
  [0o1000, 'O_TRUNC'],
  [0o2000, 'O_APPEND'],
  [0o4000, 'O_NONBLOCK'],
  [0o200000, 'O_DIRECTORY'],
  [0o400000, 'O_NOFOLLOW'],
  [0o2000000, 'O_CLOEXEC'],
  [0o10000000, 'O_PATH'],
];

/** Open flags as `O_RDONLY|O_CLOEXEC` (access mode first). */
export function formatOpenFlags(flags: number): string {
  const mode = flags & 3;
  const parts = [mode === 0 ? 'O_RDONLY' : mode === 1 ? 'O_WRONLY' : 'O_RDWR'];
  for (const [bit, name] of OPEN_FLAGS) if ((flags & bit) !== 0) parts.push(name);
  return parts.join('|');
}
