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
