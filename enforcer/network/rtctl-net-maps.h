/* Maps shared by the cgroup network programs (rtctl-net.bpf.c), their loader (rtctl-net-loader.c) and the
 * TypeScript encoder (net-map-layout.ts, which holds the same numbers; test/enforcer/network/ checks them).
 * The control plane decides everything that depends only on the workload and the protocol in advance
 * (socket creation, and connects no address rule matches); the programs look up address rules by prefix. */
#ifndef RTCTL_NET_MAPS_H
#define RTCTL_NET_MAPS_H

#define RTN_MAX_WORKLOADS 4096
#define RTN_MAX_PREFIXES 16
#define RTN_MAX_CANDIDATES 4
#define RTN_MAX_PORTS 8
#define RTN_MAX_ANCESTORS 16
/* Sources (fromSource) of a workload's network rules: at most RTN_MAX_SOURCES distinct paths and directories,
 * each at most RTN_SRC_MAX - 1 bytes. */
#define RTN_MAX_SOURCES 31
#define RTN_SRC_MAX 256
/* The longest executable path the programs name (longer ones match no source; counted). */
#define RTN_LONG 4096

/* Socket names (the `resource` of a Network operation on this plane). */
#define RTN_PROTO_TCP 1
#define RTN_PROTO_UDP 2
#define RTN_PROTO_ICMP 3
#define RTN_PROTO_RAW 4
/* A raw ICMP or ICMPv6 socket: named both raw and icmp (docs/semantics.md "Socket names"); its verdicts are
 * the combined decision over both names. */
#define RTN_PROTO_RAW_ICMP 5
/* An address rule's protocol that no socket of this plane is named by (sctp, icmpv6). */
#define RTN_PROTO_NEVER 255

/* Operations. */
#define RTN_OP_SOCKET 0
#define RTN_OP_CONNECT 1
#define RTN_OP_SENDMSG 2

/* Verdict kinds. */
#define RTN_KIND_NONE 0
#define RTN_KIND_RULE 1
#define RTN_KIND_POSTURE 2

/* Actions (as in the rule table). */
#define RTN_ACTION_ALLOW 0
#define RTN_ACTION_AUDIT 1
#define RTN_ACTION_BLOCK 2

/* rtn_workload.flags: the workload's network rules name sources (fromSource) or a terminal (pts), so each
 * decision first works out the process's class (rtn_proto_key.cls). Without them the class is always 0. */
#define RTN_WL_SOURCES 1
#define RTN_WL_PTS 2
/* The class of a process: bit i set when its executable is matched by source i of the workload (rtn_src),
 * RTN_CLS_PTS when it has a controlling terminal. */
#define RTN_CLS_PTS 0x80000000u

struct rtn_workload {
	__u32 wid;
	__u32 generation;
	__u8 nprefix4;
	__u8 nprefix6;
	__u8 flags; /* RTN_WL_* */
	__u8 pad;
	__u8 prefix4[RTN_MAX_PREFIXES]; /* distinct prefix lengths of the workload's IPv4 address rules, longest first */
	__u8 prefix6[RTN_MAX_PREFIXES];
};

struct rtn_proto_key {
	__u32 wid;
	__u8 proto; /* RTN_PROTO_* */
	__u8 op;    /* RTN_OP_SOCKET, or RTN_OP_CONNECT for a connect or send no address rule matches */
	__u16 pad;
	__u32 cls;  /* the process's class (RTN_CLS_PTS, source bits); 0 for workloads without RTN_WL_* flags */
};

struct rtn_verdict {
	__s32 rule; /* rule index in the table, -1 for the posture */
	__u8 action;
	__u8 kind;
	__u16 pad;
};

struct rtn_addr_key {
	__u32 wid;
	__u8 family; /* 4 or 6 */
	__u8 prefix;
	__u16 pad;
	__u8 addr[16]; /* network address, host bits cleared; IPv4 in the first 4 bytes */
};

struct rtn_candidate {
	__s32 rule;
	__u8 action;
	__u8 proto; /* 0 any, RTN_PROTO_*, RTN_PROTO_NEVER */
	__u8 nports;
	__u8 pts;     /* 1: matches only a process with a terminal */
	__u16 ports[RTN_MAX_PORTS];
	__u32 sources; /* 0: any executable; else the source bits of the rule's fromSource, one must be set */
};

struct rtn_addr_value {
	__u32 count;
	struct rtn_candidate c[RTN_MAX_CANDIDATES];
};

struct rtn_event {
	__u64 cgroup;
	__u32 wid;
	__s32 rule;
	__u32 generation;
	__u32 pid;
	__u32 tgid;
	__u32 uid;
	__u8 action;
	__u8 kind;
	__u8 op;
	__u8 family;
	__u8 proto;
	__u8 pad;
	__u16 port;
	__u8 addr[16];
	char comm[16];
};

/* An event of a workload with sources whose executable was named (at most RTN_SRC_MAX - 1 bytes): the event
 * followed by the path, zero terminated, as the process's root names it. */
struct rtn_event_exe {
	struct rtn_event e;
	char exe[RTN_SRC_MAX];
};

/* The node's configuration (rtn_config, one entry): the host cgroup (where host policies are registered), the
 * host's pid namespace as bpf_get_ns_current_pid_tgid() takes it (the nsfs device in the kernel's dev_t
 * encoding, major << 20 | minor, and the inode of /proc/self/ns/pid of an enforcer in the host pid namespace)
 * and the inode of the host's user namespace. A process outside that pid namespace, and in the host's user
 * namespace, is never decided by the host workload: a container's (a process that made a user namespace of its
 * own, as an unprivileged user may, stays a host process). `pidns_check` says whether the loaded programs make
 * that check (1) or the kernel refused the helpers to cgroup programs (0, before 6.10); the loader sets it when
 * it loads the programs and reports it after a restart. */
struct rtn_config {
	__u64 host_cgroup;
	__u64 pidns_dev;
	__u64 pidns_ino;
	__u64 userns_ino;
	__u32 pidns_check;
	__u32 pad;
};

/* rtn_src: a source of a workload, by path (zero padded), and which source bits a process gets from it: `exact`
 * when its executable is that path, `parent` when the path (ending in '/') is the executable's directory,
 * `ancestor` when it is a directory further up (the recursive sources). */
struct rtn_src_key {
	__u32 wid;
	char path[RTN_SRC_MAX];
};

struct rtn_src_value {
	__u32 exact;
	__u32 parent;
	__u32 ancestor;
};

/* Counters (per CPU): decisions taken, events reported, events dropped (ring buffer full), decisions of a
 * workload with sources whose executable could not be named (none, outside the process's root, longer than
 * RTN_LONG or deeper than the walk: decided as matching no source). */
#define RTN_COUNTER_DECISIONS 0
#define RTN_COUNTER_REPORTED 1
#define RTN_COUNTER_DROPPED 2
#define RTN_COUNTER_UNNAMED 3
#define RTN_COUNTERS 4

#endif
