/* Maps shared by the system call audit programs (rtctl-sys.bpf.c), their loader (rtctl-sys-loader.c) and the
 * TypeScript encoder (sys-map-layout.ts, which holds the same numbers; test/enforcer/syscalls/ checks them).
 * The kernel filters by system call number and workload and reports; which rule decides (paths, fromSource,
 * precedence) is the control plane's, on the event (docs/syscalls.md). */
#ifndef RTCTL_SYS_MAPS_H
#define RTCTL_SYS_MAPS_H

#define RTS_MAX_WORKLOADS 4096
#define RTS_MAX_ANCESTORS 16
/* System call numbers the programs watch: 0 .. RTS_NR_MAX - 1 (x86-64). */
#define RTS_NR_MAX 512
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
};

/* Counters (per CPU): watched calls seen, events reported, events dropped (ring buffer full). */
#define RTS_COUNTER_SEEN 0
#define RTS_COUNTER_REPORTED 1
#define RTS_COUNTER_DROPPED 2
#define RTS_COUNTERS 3

#endif
