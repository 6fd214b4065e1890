// Which system calls the system call plane can deny, and through which LSM hooks (the one table of it): where
// BPF-LSM programs load, sys_enter decides a covered call in the kernel and, for a Block, the LSM hooks the call
// reaches return EACCES (enforcer/syscalls/rtctl-sys.bpf.c, docs/syscalls.md). A call that is not listed is
// reported, never denied: a Block rule naming it is an audit everywhere (RT3018 says so). The hook names are
// the kernel's (`security_<hook>`); their order is the bit order of RTS_HOOK_* in rtctl-sys-maps.h.

/** The LSM hooks of the deny part, in RTS_HOOK_* bit order. */
export const SYSCALL_DENY_HOOKS = [
  'file_open',
  'path_unlink',
  'path_rmdir',
  'path_mkdir',
  'path_rename',
  'path_chmod',
  'path_chown',
  'path_link',
  'path_symlink',
  'path_mknod',
  'path_truncate',
  'path_chroot',
  'sb_mount',
  'sb_umount',
  'sb_pivotroot',
  'ptrace_access_check',
  'ptrace_traceme',
  'kernel_read_file',
  'kernel_load_data',
  'task_fix_setuid',
  'task_fix_setgid',
  'task_kill',
  'socket_create',
  'socket_connect',
  'socket_bind',
  'socket_listen',
  'settime',
  'bpf',
  'bprm_check_security',
] as const;
export type SyscallDenyHook = (typeof SYSCALL_DENY_HOOKS)[number];

/** The errno a denied call returns (`Permission denied`, as the BPF-LSM plane's denials). */
export const SYSCALL_DENY_ERRNO = 'EACCES';

/**
 * Call → the hooks it reaches where a denial stops it before it takes effect. An open that creates its file
 * reaches path_mknod before file_open, so the open-class calls name both (the file is not created either).
 */
const COVERAGE: Readonly<Record<string, readonly SyscallDenyHook[]>> = {
  open: ['path_mknod', 'file_open'],
  openat: ['path_mknod', 'file_open'],
  creat: ['path_mknod', 'file_open'],
  truncate: ['path_truncate'],
  unlink: ['path_unlink'],
  unlinkat: ['path_unlink', 'path_rmdir'],
  rmdir: ['path_rmdir'],
  mkdir: ['path_mkdir'],
  mkdirat: ['path_mkdir'],
  rename: ['path_rename'],
  renameat: ['path_rename'],
  renameat2: ['path_rename'],
  chmod: ['path_chmod'],
  fchmod: ['path_chmod'],
  fchmodat: ['path_chmod'],
  chown: ['path_chown'],
  fchown: ['path_chown'],
  lchown: ['path_chown'],
  fchownat: ['path_chown'],
  link: ['path_link'],
  linkat: ['path_link'],
  symlink: ['path_symlink'],
  symlinkat: ['path_symlink'],
  mknod: ['path_mknod'],
  mknodat: ['path_mknod'],
  chroot: ['path_chroot'],
  pivot_root: ['sb_pivotroot'],
  mount: ['sb_mount'],
  umount2: ['sb_umount'],
  ptrace: ['ptrace_access_check', 'ptrace_traceme'],
  init_module: ['kernel_load_data'],
  finit_module: ['kernel_read_file'],
  setuid: ['task_fix_setuid'],
  setreuid: ['task_fix_setuid'],
  setresuid: ['task_fix_setuid'],
  setfsuid: ['task_fix_setuid'],
  setgid: ['task_fix_setgid'],
  setregid: ['task_fix_setgid'],
  setresgid: ['task_fix_setgid'],
  setfsgid: ['task_fix_setgid'],
  kill: ['task_kill'],
  tkill: ['task_kill'],
  tgkill: ['task_kill'],
  socket: ['socket_create'],
  connect: ['socket_connect'],
  bind: ['socket_bind'],
  listen: ['socket_listen'],
  settimeofday: ['settime'],
  clock_settime: ['settime'],
  bpf: ['bpf'],
  execve: ['bprm_check_security'],
  execveat: ['bprm_check_security'],
};

/**
 * The hooks that receive the object a call acts on (a struct path, a directory and the entry in it, a struct
 * file, a vfsmount, a linux_binprm): RTS_OBJECT_HOOKS of rtctl-sys-maps.h. A call that names a path and reaches
 * only these has its `matchPaths` rules decided in the hook, on the object's name as the kernel resolved it, not on
 * the string the caller passed (docs/syscalls.md).
 */
export const SYSCALL_OBJECT_HOOKS: readonly SyscallDenyHook[] = [
  'file_open',
  'path_unlink',
  'path_rmdir',
  'path_mkdir',
  'path_rename',
  'path_chmod',
  'path_chown',
  'path_link',
  'path_symlink',
  'path_mknod',
  'path_truncate',
  'path_chroot',
  'sb_mount',
  'sb_umount',
  'bprm_check_security',
];

/** Whether a covered call reaches only hooks that receive its object (its path rules are decided there). */
export function isSyscallDecidedOnObject(call: string): boolean {
  const hooks = getSyscallDenyHooks(call);
  return hooks !== undefined && hooks.every((h) => SYSCALL_OBJECT_HOOKS.includes(h));
}

/** The hooks that deny a call, or undefined when no hook covers it (the call is only ever audited). */
export function getSyscallDenyHooks(call: string): readonly SyscallDenyHook[] | undefined {
  return Object.hasOwn(COVERAGE, call) ? COVERAGE[call] : undefined;
}

/** The RTS_HOOK_* bit mask of a call's hooks (0 when it is not covered). */
export function getSyscallDenyHookMask(call: string): number {
  let mask = 0;
  for (const hook of getSyscallDenyHooks(call) ?? []) mask |= 1 << SYSCALL_DENY_HOOKS.indexOf(hook);
  return mask;
}

/** The calls some hook covers, sorted. */
export function listCoveredSyscalls(): string[] {
  return Object.keys(COVERAGE).sort();
}

/** The calls of a list that no hook covers, in list order. */
export function listUncoveredSyscalls(calls: readonly string[]): string[] {
  return calls.filter((c) => getSyscallDenyHooks(c) === undefined);
}

/** The coverage as rows for docs/syscalls.md: hook → the calls it denies. */
export function listSyscallCoverageByHook(): { hook: SyscallDenyHook; calls: string[] }[] {
  return SYSCALL_DENY_HOOKS.map((hook) => ({
    hook,
    calls: Object.keys(COVERAGE)
      .filter((c) => (COVERAGE[c] ?? []).includes(hook))
      .sort(),
  }));
}
