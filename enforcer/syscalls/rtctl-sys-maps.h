/* Maps shared by the system call audit programs (rtctl-sys.bpf.c), their loader (rtctl-sys-loader.c) and the
 * TypeScript encoder (sys-map-layout.ts, which holds the same numbers; test/enforcer/syscalls/ checks them).
 * The kernel filters by system call number and workload and reports; which rule the alert names (paths,
 * fromSource, precedence) is the control plane's, on the event (docs/syscalls.md). Where the LSM programs are
 * attached, sys_enter also decides a covered call on rts_decide and rts_kpaths, and the LSM hooks deny a Block. */
#ifndef RTCTL_SYS_MAPS_H
#define RTCTL_SYS_MAPS_H

#define RTS_MAX_WORKLOADS 4096
#define RTS_MAX_ANCESTORS 16
/* System call numbers the programs watch: 0 .. RTS_NR_MAX - 1 (x86-64). */
#define RTS_NR_MAX 512
/* 32-bit calls (int 0x80, sysenter; the thread's TS_COMPAT status): numbers 0 .. RTS_COMPAT_NR_MAX - 1 of the
 * i386 table, translated by rts_compat (value: the x86-64 number + 1; 0: not translated, neither reported nor
 * decided). Their arguments are in bx, cx, dx, si, di, bp. */
#define RTS_COMPAT_NR_MAX 512
#define RTS_TS_COMPAT 0x0002
#define RTS_PATH_MAX 256
#define RTS_NAME_MAX 64

/* Event kinds. */
#define RTS_EVENT_SYSCALL 1
#define RTS_EVENT_FILELESS 2

/* Fileless exec actions of a workload (as in the rule table: 0 none, 1 audit, 2 block). */
#define RTS_ACTION_NONE 0
#define RTS_ACTION_AUDIT 1
#define RTS_ACTION_BLOCK 2

struct rts_workload {
	__u32 wid;
	__u32 generation;
	__u8 fileless; /* RTS_ACTION_* of the workload's filelessExec preset */
	__u8 host;     /* the host workload (the root cgroup): only processes of the initial pid namespace */
	__u8 pad[2];
};

struct rts_watch_key {
	__u32 wid;
	__u32 nr;
};

struct rts_watch {
	__s8 path_arg;  /* the argument holding a path (0..5), -1 for none */
	__s8 dirfd_arg; /* the argument holding the directory fd the path is relative to, -1 for none */
	__u8 pad[2];
};

struct rts_exe {
	char path[RTS_PATH_MAX];
};

struct rts_event {
	__u64 cgroup;
	__u64 args[6];
	__u32 kind;
	__u32 wid;
	__u32 generation;
	__u32 nr;
	__u32 pid;
	__u32 tgid;
	__u32 ppid;
	__u32 uid;
	__u32 nlink;
	__u8 action; /* fileless: what was done (RTS_ACTION_AUDIT, or RTS_ACTION_BLOCK: killed) */
	__s8 path_arg;
	__s8 dirfd_arg;
	__u8 pad;
	char comm[16];
	char exe[RTS_PATH_MAX];
	char path[RTS_PATH_MAX];
	char name[RTS_NAME_MAX];
	__u32 ns_pid;  /* the caller's pid in its own pid namespace */
	__u32 ns_ppid; /* its parent's pid in that namespace (0 when the parent is outside it) */
	__u32 rule;    /* RTS_VERDICT_DENY/ALLOW: the record index of the rule the kernel found, else ~0 */
	__u8 verdict;  /* RTS_VERDICT_*: what the kernel decided at sys_enter */
	__u8 pad2[3];
};

/* Kernel verdicts of a syscall event (rts_event.verdict). The kernel decides only where the LSM programs are
 * attached and the call is covered (a rts_decide entry exists); the record it leaves in rts_deny makes the
 * LSM hooks the call reaches return -EACCES. */
#define RTS_VERDICT_NONE 0      /* not decided in the kernel: no LSM part, or a call no hook covers */
#define RTS_VERDICT_ALLOW 1     /* decided: the deciding rule is Audit or Allow, or no rule matched */
#define RTS_VERDICT_DENY 2      /* decided: a Block rule; the call's LSM hooks deny it with EACCES */
#define RTS_VERDICT_UNDECIDED 3 /* covered, but the kernel cannot decide: a relative or unnormalised path, an
				 * executable it does not know, more rules than RTS_DECIDE_RULES; not denied */
#define RTS_VERDICT_UNREACHED 4 /* decided on the object in the LSM hook (below), and the call reached none of its
				 * hooks: it failed before it acted on any object (ENOENT, EEXIST, ...); not denied */

/* LSM hooks of the deny part (bits of rts_decide.hooks and rts_deny.hooks); which calls reach which hook is
 * the table of compiler/enforcement/syscall-coverage.ts. */
#define RTS_HOOK_FILE_OPEN 0
#define RTS_HOOK_PATH_UNLINK 1
#define RTS_HOOK_PATH_RMDIR 2
#define RTS_HOOK_PATH_MKDIR 3
#define RTS_HOOK_PATH_RENAME 4
#define RTS_HOOK_PATH_CHMOD 5
#define RTS_HOOK_PATH_CHOWN 6
#define RTS_HOOK_PATH_LINK 7
#define RTS_HOOK_PATH_SYMLINK 8
#define RTS_HOOK_PATH_MKNOD 9
#define RTS_HOOK_PATH_TRUNCATE 10
#define RTS_HOOK_PATH_CHROOT 11
#define RTS_HOOK_SB_MOUNT 12
#define RTS_HOOK_SB_UMOUNT 13
#define RTS_HOOK_SB_PIVOTROOT 14
#define RTS_HOOK_PTRACE_ACCESS_CHECK 15
#define RTS_HOOK_PTRACE_TRACEME 16
#define RTS_HOOK_KERNEL_READ_FILE 17
#define RTS_HOOK_KERNEL_LOAD_DATA 18
#define RTS_HOOK_TASK_FIX_SETUID 19
#define RTS_HOOK_TASK_FIX_SETGID 20
#define RTS_HOOK_TASK_KILL 21
#define RTS_HOOK_SOCKET_CREATE 22
#define RTS_HOOK_SOCKET_CONNECT 23
#define RTS_HOOK_SOCKET_BIND 24
#define RTS_HOOK_SOCKET_LISTEN 25
#define RTS_HOOK_SETTIME 26
#define RTS_HOOK_BPF 27
#define RTS_HOOK_BPRM_CHECK 28
#define RTS_HOOKS 29

/* The hooks that receive the object a call acts on (a struct path, or a directory and a dentry, or a struct file,
 * a vfsmount, a linux_binprm): where every hook of a call with a path argument is one of them, the path rules
 * are decided in the hook on the object's name as the kernel resolved it (RTS_MODE_HOOK), not on the string the
 * caller passed. */
#define RTS_OBJECT_HOOKS                                                                                    \
	((1ULL << RTS_HOOK_FILE_OPEN) | (1ULL << RTS_HOOK_PATH_UNLINK) | (1ULL << RTS_HOOK_PATH_RMDIR) |    \
	 (1ULL << RTS_HOOK_PATH_MKDIR) | (1ULL << RTS_HOOK_PATH_RENAME) | (1ULL << RTS_HOOK_PATH_CHMOD) |   \
	 (1ULL << RTS_HOOK_PATH_CHOWN) | (1ULL << RTS_HOOK_PATH_LINK) | (1ULL << RTS_HOOK_PATH_SYMLINK) |   \
	 (1ULL << RTS_HOOK_PATH_MKNOD) | (1ULL << RTS_HOOK_PATH_TRUNCATE) | (1ULL << RTS_HOOK_PATH_CHROOT) | \
	 (1ULL << RTS_HOOK_SB_MOUNT) | (1ULL << RTS_HOOK_SB_UMOUNT) | (1ULL << RTS_HOOK_BPRM_CHECK))

/* The rules of one watched call of one workload that the kernel decides (rts_decide, key rts_watch_key): the
 * syscalls records of the call that the workload's policies select, in table (precedence) order, at most
 * RTS_DECIDE_RULES; bit i of each mask is rule i. A rule matches when its path matches (`nopath`, or a
 * rts_kpaths entry of kind RTS_KPATH_CALL) and its source matches (`nosource`, or an entry of kind
 * RTS_KPATH_SOURCE); the first matching rule decides, Block when its bit is in `block`. */
#define RTS_DECIDE_RULES 64
#define RTS_DECIDE_OVERFLOW 1 /* more rules than RTS_DECIDE_RULES: every call is RTS_VERDICT_UNDECIDED */
struct rts_decide {
	__u64 nopath;   /* rules without a path */
	__u64 nosource; /* rules without fromSource */
	__u64 block;    /* Block rules */
	__u64 valid;    /* the rules there are (bits 0 .. count - 1) */
	__u64 hooks;    /* RTS_HOOK_* bits: the hooks this call reaches */
	__u32 flags;    /* RTS_DECIDE_* */
	__u32 pad;
	__u32 index[RTS_DECIDE_RULES]; /* the record index of each rule */
};

/* A path of a decided call's rules, or a source: exact bytes, zero-padded (the hash map compares all). */
#define RTS_KPATH_CALL 0
#define RTS_KPATH_SOURCE 1
struct rts_kpath_key {
	__u32 wid;
	__u16 nr;
	__u8 kind; /* RTS_KPATH_* */
	__u8 pad;
	char path[RTS_PATH_MAX];
};
struct rts_kpath_val {
	__u64 exact;     /* rules whose file path (source path) is this string */
	__u64 dir;       /* rules whose directory (non-recursive) is this string (ending in '/') */
	__u64 recursive; /* rules whose directory (recursive) is this string */
};

/* The deny record of a thread (task storage), written at sys_enter of a decided call: the LSM hooks in `hooks`
 * deny with EACCES while the thread is in call `nr` (its orig_ax) and the state is still the one of `epoch` (a
 * record left by a call that is no longer watched is stale once the control plane applies a new state).
 * RTS_MODE_STRING: sys_enter decided (`deny`). RTS_MODE_HOOK: the call's path rules are decided by the first of
 * its hooks it reaches, on the object (`wid`, `xnr`: the rts_decide key), which sets `deny`, the event's path
 * (the object's), verdict and rule (RTS_MODE_DECIDED); sys_exit reports the event, reached or not. */
#define RTS_MODE_STRING 0
#define RTS_MODE_HOOK 1
#define RTS_MODE_DECIDED 2
#define RTS_MODE_DONE 3
struct rts_deny {
	__u64 hooks;
	__u32 nr;
	__u32 epoch;
	__u8 deny;
	__u8 mode; /* RTS_MODE_* */
	__u8 pad[2];
	__u32 wid;
	__u32 xnr;
	__u32 pad2;
	struct rts_event ev;
};

/* Global state of the deny part (rts_config[0]): a number the control plane draws at each apply, and whether path
 * rules are decided on the object in the hooks (1 where the LSM hooks are attached). */
struct rts_config {
	__u32 epoch;
	__u32 objects;
};

/* Counters (per CPU): watched calls seen, events reported, events dropped (ring buffer full), calls denied. */
#define RTS_COUNTER_SEEN 0
#define RTS_COUNTER_REPORTED 1
#define RTS_COUNTER_DROPPED 2
/* Calls an LSM hook denied (EACCES) on a deny record. */
#define RTS_COUNTER_DENIED 3
#define RTS_COUNTERS 4

#endif
