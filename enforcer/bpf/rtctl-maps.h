/* Map layouts shared by the BPF-LSM programs (rtctl-lsm.bpf.c), the loader (loader/rtctl-bpf-loader.c)
 * and the TypeScript encoder (map-layout.ts, which must mirror every offset here). All structs have
 * explicit padding, so the layout is the same for clang -target bpf and for x86-64 gcc.
 *
 * Every table map carries a slot (0 or 1) in its key or index: the loader fills the inactive slot,
 * then flips rt_config.active, so an operation is decided wholly by one state (docs/bpf-lsm.md). */
#ifndef RTCTL_MAPS_H
#define RTCTL_MAPS_H

#define RT_PATH_MAX 256        /* bytes of a path, NUL included; longer paths are not matched */
#define RT_MAX_REFS 32         /* rule indices per index node */
#define RT_SRC_WORDS 4         /* 256 distinct fromSource records */
#define RT_POL_WORDS 16        /* 1024 policies */
#define RT_MAX_RULES 8192      /* per slot */
#define RT_MAX_INDEX 16384     /* index nodes per slot */
#define RT_MAX_PATTERNS 256    /* glob rules per slot */
#define RT_MAX_PATTERN_TOKENS 63
#define RT_MAX_SOURCE_KEYS 1024
#define RT_MAX_WORKLOADS 1024  /* per slot */
#define RT_WNAME_MAX 128
#define RT_MAX_PATTERN_CANDIDATES 16

/* Operation classes, index node kinds, actions and rule flags are the rule table's own codes
 * (docs/rule-table.md): the programs walk the table's index lists and rule records as encoded by
 * encode-state.ts, so they share the table's layout header. */
#include "rule-table-layout.h"

#define RT_FLAG_SOURCES 128 /* set by the encoder: the rule has fromSource records (not a table flag) */

/* Workload key kinds. */
#define RT_WKEY_CGROUP 1
#define RT_WKEY_MNTNS 2

/* rt_workload.features */
#define RT_FEATURE_EXECNAME 1
#define RT_FEATURE_PATTERNS 2

/* Event kinds. */
#define RT_EVENT_BLOCK 1
#define RT_EVENT_AUDIT 2
#define RT_EVENT_POSTURE 3

/* rt_config[0] (array, 1 entry) */
struct rt_config {
	__u32 active;          /* slot in force: 0 or 1 */
	__u32 generation[2];   /* state generation per slot */
	__u32 workloads[2];    /* workload count per slot */
	__u32 enabled;         /* 0: every hook returns 0 without deciding */
	__u32 cache_off;       /* 1: the file_open decision cache is neither read nor filled (for measuring) */
	__u32 cache_slots;     /* slots of rt_dcache in use, a power of two; 0: all RT_DCACHE_SLOTS (fewer: tests only) */
};

/* rt_index (hash): (slot, class, kind, key) -> rule indices ascending */
struct rt_index_key {
	__u32 slot;
	__u8 cls;
	__u8 kind;
	__u16 pad;
	char key[RT_PATH_MAX]; /* zero padded */
};
struct rt_index_val {
	__u32 count;
	__u32 rules[RT_MAX_REFS];
};

/* rt_rules (array): index slot * RT_MAX_RULES + rule */
struct rt_rule {
	__u32 policy;
	__u8 cls;
	__u8 matcher;
	__u8 action;
	__u8 flags;
	__u32 pattern;  /* pattern id for glob rules */
	__u32 present;  /* 1 when the entry is in use */
	__u64 sources[RT_SRC_WORDS]; /* bit per source id */
};

/* rt_patterns (array): index slot * RT_MAX_PATTERNS + id. Bit i of a mask is token i; the pattern
 * matches when bit `tokens` of the state is set after the last byte. */
struct rt_pattern {
	__u32 tokens;
	__u32 pad;
	__u64 star;         /* `*` tokens: loop on any byte but '/' */
	__u64 dstar;        /* `**` tokens: loop on any byte */
	__u64 accept[256];  /* tokens that consume byte b and advance */
};

/* rt_sources (hash): (slot, path or directory with trailing '/') -> source ids (-1: none) */
struct rt_source_key {
	__u32 slot;
	__u32 pad;
	char key[RT_PATH_MAX];
};
struct rt_source_val {
	__s32 path_id;    /* a `path` source equal to the key */
	__s32 dir_id;     /* a non-recursive `dir` source equal to the key */
	__s32 dir_rec_id; /* a recursive `dir` source equal to the key */
	__u32 pad;
};

/* rt_workloads (hash): (slot, key kind, id) -> workload */
struct rt_workload_key {
	__u32 slot;
	__u32 kind; /* RT_WKEY_* */
	__u64 id;   /* cgroup id or mount namespace inode */
};
struct rt_workload {
	__u32 wid;        /* index into rt_wnames and the apply request's workload list */
	__u8 posture[4];  /* per class: 0 audit, 1 block (Process carries the file posture) */
	__u8 lp_unscoped; /* bit c: some selected policy has an Allow rule of class c without fromSource */
	__u8 has_sources; /* 1: some rule or least-permissive source needs the actor's source bits */
	__u8 features;    /* RT_FEATURE_*: node kinds the table has at all (lookups skipped otherwise) */
	__u8 pad;
	__u32 pad2;
	__u64 policies[RT_POL_WORDS];
	__u64 lp_sources[4][RT_SRC_WORDS];
};

/* rt_wnames (array): index slot * RT_MAX_WORKLOADS + wid */
struct rt_wname {
	char key[RT_WNAME_MAX];
};

/* rt_counters (per-CPU array, 1 entry) */
struct rt_counters {
	__u64 decisions;
	__u64 events;
	__u64 dropped;
	__u64 cache_hits; /* file_open decisions answered from rt_dcache */
};

/* rt_dcache (direct-mapped array of RT_DCACHE_SLOTS struct rt_dslot): "allow without alert" answers of
 * file_open and bprm_check_security, valid while the stamp stored with them is still the current one
 * (docs/bpf-lsm.md "Decision cache"). The key holds everything the walk reads: the opened name (dentry,
 * its parent and name hash, mount, inode incarnation), the task's root, the mode, owner and terminal bits,
 * the workload, and the actor's executable when the workload's rules or least-permissive sources look at
 * it. A slot is chosen from the dentry, the actor, the workload and the mode bits; a hit needs every key
 * word and the stamp equal, read between two equal even values of the slot's sequence word. */
#define RT_DCACHE_SLOTS 16384
#define RT_DCACHE_SHIFT 50     /* 64 - log2(RT_DCACHE_SLOTS): the multiply-shift keeps the product's top bits */
struct rt_dkey {
	__u64 dentry;
	__u64 parent;      /* dentry->d_parent */
	__u64 name;        /* dentry->d_name.hash_len */
	__u64 mnt;
	__u64 inode;
	__u64 ino;
	__u64 root_mnt;    /* the task's root (paths are relative to it) */
	__u64 root_dentry;
	__u64 exe;         /* mm->exe_file, its inode number and its dentry; 0 when no rule of the workload reads
			    * the actor. The dentry tells apart a file freed and its address reused for another
			    * name of the same inode (a hard link: busybox's /bin/sh and /bin/cat) */
	__u64 exe_ino;
	__u64 exe_dentry;
	__u32 igen;        /* inode->i_generation */
	__u32 wid;
	__u8 write;
	__u8 owner;
	__u8 tty;
	__u8 exec;         /* 1: an exec's answer (bprm_check_security, decided as Process); 0: an open's */
	__u8 pad[4];
};
struct rt_dstamp {
	__u64 epoch;       /* rt_epoch[0]: moved on by the loader after each slot flip */
	__u32 rename_seq;  /* rename_lock's sequence count */
	__u32 mount_seq;   /* mount_lock's sequence count */
};
struct rt_dslot {
	__u64 seq;         /* even: stable; odd: a writer is filling the slot (rtctl-lsm.bpf.c dcache_store) */
	struct rt_dkey key;
	struct rt_dstamp stamp;
};

/* rt_task_wl (task storage): the workload of a task as find_workload found it, and what it was found from:
 * valid while the epoch, the task's cgroup id and its mount namespace's inode number are all unchanged. */
struct rt_task_wl {
	__u64 epoch;
	__u64 cgroup;
	__u32 mntns;
	__u32 wid;
	__u8 found;        /* 0: the task is in no workload */
	__u8 has_sources;  /* the workload's rt_workload.has_sources */
	__u8 pad[6];
};

/* Ring buffer record. */
struct rt_event {
	__u64 time_ns;      /* CLOCK_BOOTTIME; the loader converts to wall clock */
	__u32 wid;
	__u32 generation;
	__u32 pid;          /* host tgid */
	__u32 ppid;         /* host tgid of the real parent */
	__u32 ns_pid;
	__u32 ns_ppid;
	__u32 uid;
	__s32 rule;         /* -1: posture */
	__u8 cls;
	__u8 kind;          /* RT_EVENT_* */
	__u8 action;        /* RT_ACTION_AUDIT or RT_ACTION_BLOCK */
	__u8 write;
	__s32 err;          /* errno returned (positive), 0 when allowed */
	__u32 syscall;      /* syscall number of the acting task, -1 unknown */
	__u32 flags;        /* File: open flags. Network: family. Capabilities: capability number */
	__u32 arg2;         /* Network: type */
	__u32 arg3;         /* Network: protocol */
	__u32 arg0;         /* first system call argument, low 32 bits (openat: the directory fd) */
	char resource[RT_PATH_MAX];
	char exe[RT_PATH_MAX];
	char parent_exe[RT_PATH_MAX];
};

#endif
