// Which argument of an x86-64 system call holds the path it names, and which holds the directory fd a relative
// path is resolved from (the `*at` calls). A fact table of the kernel's calling conventions; a call not listed
// names no path, so a `syscalls.matchPaths` rule on it never matches (docs/syscalls.md).
import { SYSCALL_NAMES } from '../../compiler/schema/syscall-names.js';

/** [path argument, directory fd argument or -1]. */
const PATH_ARGUMENTS: Readonly<Record<string, readonly [number, number]>> = {
  open: [0, -1],
  stat: [0, -1],
  lstat: [0, -1],
  access: [0, -1],
  execve: [0, -1],
  truncate: [0, -1],
  chdir: [0, -1],
  rename: [0, -1],
  mkdir: [0, -1],
  rmdir: [0, -1],
  creat: [0, -1],
  link: [0, -1],
  unlink: [0, -1],
  symlink: [1, -1],
  readlink: [0, -1],
  chmod: [0, -1],
  chown: [0, -1],
  lchown: [0, -1],
  utime: [0, -1],
  mknod: [0, -1],
  uselib: [0, -1],
  statfs: [0, -1],
  chroot: [0, -1],
  acct: [0, -1],
  mount: [1, -1],
  umount2: [0, -1],
  swapon: [0, -1],
  swapoff: [0, -1],
  setxattr: [0, -1],
  lsetxattr: [0, -1],
  getxattr: [0, -1],
  lgetxattr: [0, -1],
  listxattr: [0, -1],
  llistxattr: [0, -1],
  removexattr: [0, -1],
  lremovexattr: [0, -1],
  utimes: [0, -1],
  inotify_add_watch: [1, -1],
  openat: [1, 0],
  mkdirat: [1, 0],
  mknodat: [1, 0],
  fchownat: [1, 0],
  futimesat: [1, 0],
  newfstatat: [1, 0],
  unlinkat: [1, 0],
  renameat: [1, 0],
  linkat: [1, 0],
  symlinkat: [2, 1],
  readlinkat: [1, 0],
  fchmodat: [1, 0],
  faccessat: [1, 0],
  utimensat: [1, 0],
  execveat: [1, 0],
  name_to_handle_at: [1, 0],
  renameat2: [1, 0],
  statx: [1, 0],
  openat2: [1, 0],
  faccessat2: [1, 0],
};

/** The x86-64 number of a call the schema lists (the schema's list is the kernel's table, in number order). */
export function getSyscallNumber(name: string): number | undefined {
  const nr = SYSCALL_NAMES.indexOf(name as (typeof SYSCALL_NAMES)[number]);
  return nr === -1 ? undefined : nr;
}

/** The name of an x86-64 call number, `` when the schema does not list it. */
export function getSyscallNameOf(nr: number): string {
  return SYSCALL_NAMES[nr] ?? '';
}

/** The path and directory fd arguments of a call; [-1, -1] when it names no path. */
export function getPathArguments(name: string): readonly [number, number] {
  return PATH_ARGUMENTS[name] ?? [-1, -1];
}

/**
 * 32-bit calls (int 0x80 or sysenter, from a 32-bit program or from 64-bit code) that the plane translates: the
 * i386 number and the x86-64 call it is. The calls an LSM hook covers (compiler/enforcement/syscall-coverage.ts),
 * with their 16-bit-uid and 32-bit-uid variants under the call's name, so that a 32-bit call cannot pass by a
 * Block; other 32-bit calls are neither reported nor denied (docs/syscalls.md). A fact table of the kernel's
 * syscall_32.tbl (test/enforcer/syscalls/ checks it against asm/unistd_32.h).
 */
export const COMPAT_SYSCALLS: readonly (readonly [number, string])[] = [
  [5, 'open'],
  [8, 'creat'],
  [9, 'link'],
  [10, 'unlink'],
  [11, 'execve'],
  [14, 'mknod'],
  [15, 'chmod'],
  [16, 'lchown'],
  [21, 'mount'],
  [23, 'setuid'],
  [26, 'ptrace'],
  [37, 'kill'],
  [38, 'rename'],
  [39, 'mkdir'],
  [40, 'rmdir'],
  [46, 'setgid'],
  [52, 'umount2'],
  [61, 'chroot'],
  [70, 'setreuid'],
  [71, 'setregid'],
  [79, 'settimeofday'],
  [83, 'symlink'],
  [92, 'truncate'],
  [94, 'fchmod'],
  [95, 'fchown'],
  [128, 'init_module'],
  [138, 'setfsuid'],
  [139, 'setfsgid'],
  [164, 'setresuid'],
  [170, 'setresgid'],
  [182, 'chown'],
  [198, 'lchown'],
  [203, 'setreuid'],
  [204, 'setregid'],
  [207, 'fchown'],
  [208, 'setresuid'],
  [210, 'setresgid'],
  [212, 'chown'],
  [213, 'setuid'],
  [214, 'setgid'],
  [215, 'setfsuid'],
  [216, 'setfsgid'],
  [217, 'pivot_root'],
  [238, 'tkill'],
  [264, 'clock_settime'],
  [270, 'tgkill'],
  [295, 'openat'],
  [296, 'mkdirat'],
  [297, 'mknodat'],
  [298, 'fchownat'],
  [301, 'unlinkat'],
  [302, 'renameat'],
  [303, 'linkat'],
  [304, 'symlinkat'],
  [306, 'fchmodat'],
  [350, 'finit_module'],
  [353, 'renameat2'],
  [357, 'bpf'],
  [358, 'execveat'],
  [359, 'socket'],
  [361, 'bind'],
  [362, 'connect'],
  [363, 'listen'],
  [404, 'clock_settime'],
];
