// SPDX-License-Identifier: GPL-2.0
/* The system call audit plane: a BTF tracepoint on sys_enter reports the calls a workload's `syscalls` rules
 * name, filtered in the kernel by call number (rts_nrs, one array lookup for every call of the node) and by
 * workload (the deepest registered cgroup among the caller's ancestors) and watch (rts_watch). The event carries
 * the call's arguments, the path argument read from the caller's memory, and the caller's executable as its
 * last exec named it (rts_exe, kept by sched_process_exec and sched_process_fork). The control plane decides
 * which rule it is (paths, fromSource, precedence). sched_process_exec also reports the exec of a file without
 * links (a memfd, an O_TMPFILE or a deleted file) in a workload with the filelessExec preset, and kills the
 * process before its first instruction when the preset blocks.
 *
 * The deny part (where LSM programs load): for a watched call that an LSM hook covers, sys_enter also decides
 * in the kernel on the workload's rules of that call (rts_decide: precedence order; rts_kpaths: their paths and
 * sources as exact strings) and leaves a deny record in task storage (rts_deny); the rts_lsm_* programs on the
 * hooks the call reaches return -EACCES while the record matches the thread's current call. One decision, at
 * sys_enter; the hooks only carry it out. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "rtctl-sys-maps.h"
#include "../bpf-common/rtctl-walk.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGKILL 9
#define EACCES 13
#define AT_FDCWD -100
/* The longest path the kernel takes (PATH_MAX): the deny part reads and normalises the whole path argument. */
#define RTS_LONG 4096
/* Steps (directory levels and mount crossings) walked to name a directory or an object: each level is 2 bytes
 * of the name at least, so a name of RTS_LONG bytes is reached first. */
#define RTS_WALK_STEPS (RTS_LONG / 2 + 64)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RTS_NR_MAX);
	__type(key, __u32);
	__type(value, __u32);
} rts_nrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RTS_MAX_WORKLOADS);
	__type(key, __u64);
	__type(value, struct rts_workload);
} rts_workloads SEC(".maps");

/* i386 call number -> x86-64 number + 1 (0: a 32-bit call this plane does not translate). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RTS_COMPAT_NR_MAX);
	__type(key, __u32);
	__type(value, __u32);
} rts_compat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rts_watch_key);
	__type(value, struct rts_watch);
} rts_watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct rts_exe);
} rts_exe SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rts_exe);
} rts_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} rts_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RTS_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} rts_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rts_watch_key);
	__type(value, struct rts_decide);
} rts_decide SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rts_kpath_key);
	__type(value, struct rts_kpath_val);
} rts_kpaths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rts_deny);
} rts_deny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rts_config);
} rts_config SEC(".maps");

/* Per-CPU working memory of one kernel decision (the BPF stack is 512 bytes). */
struct rts_dscratch {
	struct rts_kpath_key key;
	char str[2 * RTS_LONG];     /* the string being decided on (a directory, '/', and a relative path) */
	char path[RTS_LONG];        /* the call's path argument as read at sys_enter; in a hook, the object's */
	char norm[2 * RTS_LONG];    /* the string normalised (`.`, `..`, repeated and trailing '/' resolved); while
				     * naming a directory or an object, its name built from its end (at RTS_LONG) */
	__u16 segs[RTS_LONG];       /* normalising: where each segment kept so far starts in norm (each is 2 bytes
				     * at least: no more than RTS_LONG of them in 2 * RTS_LONG bytes) */
	__u64 bits;                  /* rts_match's result */
	__u32 rule;                  /* rts_object_decide's rule (record index, ~0 for none) */
	__u32 pad;
	__u32 truncated;             /* the path argument did not fit in `path` */
	__u32 unknown0;              /* never written (0): a start value the verifier does not follow as a constant,
				      * so that it does not walk a loop's iterations one by one */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rts_dscratch);
} rts_dscratch SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&rts_counters, &which);
	if (c)
		*c += 1;
}

/* The workload of the current process: the deepest registered cgroup among its ancestors. The host workload
 * (registered at the root cgroup) does not take a container's process (outside the initial pid namespace, in
 * the initial user namespace), so that a container the control plane does not enforce is not decided by host
 * policies; a process that made a pid namespace inside a user namespace of its own (no privilege needed) is
 * still a host process. */
static __always_inline struct rts_workload *current_workload(__u64 *cgroup)
{
	struct rts_workload *found = 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	for (int level = 0; level < RTS_MAX_ANCESTORS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			break;
		struct rts_workload *w = bpf_map_lookup_elem(&rts_workloads, &id);
		if (w) {
			found = w;
			*cgroup = id;
		}
	}
	if (found && found->host && task->thread_pid && task->thread_pid->level != 0 && task->cred &&
	    task->cred->user_ns && task->cred->user_ns->level == 0)
		return 0;
	return found;
}

static __always_inline void fill_common(struct rts_event *e, struct rts_workload *w, __u64 cgroup)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	e->cgroup = cgroup;
	e->wid = w->wid;
	e->generation = w->generation;
	e->pid = (__u32)pid_tgid;
	e->tgid = pid_tgid >> 32;
	e->ppid = task->real_parent ? task->real_parent->tgid : 0;
	e->uid = (__u32)bpf_get_current_uid_gid();
	/* Pids as the workload sees them: the number of the caller's (and its parent's) struct pid at the level of
	 * the caller's pid namespace. */
	struct pid *own = task->group_leader ? task->group_leader->thread_pid : 0;
	__u32 level = own ? own->level : 0;
	struct upid up = {};
	e->ns_pid = 0;
	e->ns_ppid = 0;
	if (own && level < 32 && bpf_probe_read_kernel(&up, sizeof(up), &own->numbers[level]) == 0)
		e->ns_pid = up.nr;
	struct task_struct *parent = task->real_parent;
	struct pid *theirs = parent && parent->group_leader ? parent->group_leader->thread_pid : 0;
	if (theirs && level < 32 && theirs->level >= level &&
	    bpf_probe_read_kernel(&up, sizeof(up), &theirs->numbers[level]) == 0)
		e->ns_ppid = up.nr;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	__u32 tgid = e->tgid;
	struct rts_exe *x = bpf_map_lookup_elem(&rts_exe, &tgid);
	if (x)
		__builtin_memcpy(e->exe, x->path, sizeof(e->exe));
	else
		e->exe[0] = 0;
}

/* ---- the kernel decision of a covered call (deny part) ------------------------------------------------ */

struct scan_ctx {
	__u64 bits;     /* rules matched by a directory prefix */
	__u64 last_dir; /* rules whose non-recursive directory is the prefix up to the last '/' */
	__u32 len;      /* length of the string (2 * RTS_LONG: no end within the buffer) */
	__u32 bad;
};

/* One byte of the scanned (normalised) string: copies it into the key while it fits, and at each '/' within the
 * key's reach looks the prefix up (a directory of some rule ends in '/'; rule strings are shorter than
 * RTS_PATH_MAX, so a longer prefix names no rule). */
static long scan_step(__u32 i, void *data)
{
	struct scan_ctx *c = data;
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s) {
		c->bad = 1;
		return 1;
	}
	char ch = s->str[i & (2 * RTS_LONG - 1)];
	if (ch == 0) {
		c->len = i;
		return 1;
	}
	if (i >= RTS_PATH_MAX - 1) {
		if (ch == '/')
			c->last_dir = 0;
		return 0;
	}
	s->key.path[i & (RTS_PATH_MAX - 1)] = ch;
	if (ch != '/')
		return 0;
	struct rts_kpath_val *v = bpf_map_lookup_elem(&rts_kpaths, &s->key);
	c->bits |= v ? v->recursive : 0;
	c->last_dir = v ? v->dir : 0;
	return 0;
}

/* The rules (bits) whose path (kind RTS_KPATH_CALL) or source (RTS_KPATH_SOURCE) matches the normalised
 * absolute path in s->str: equal to a file path, directly in a directory, or below a recursive one (the oracle's
 * isInDirectory: never the directory itself). */
static __always_inline int scan(struct rts_dscratch *s, __u32 wid, __u32 nr, __u8 kind, __u64 *bits)
{
	if (s->str[0] != '/')
		return -1;
	__builtin_memset(&s->key, 0, sizeof(s->key));
	s->key.wid = wid;
	s->key.nr = (__u16)nr;
	s->key.kind = kind;
	struct scan_ctx c = { .bits = 0, .last_dir = 0, .len = 2 * RTS_LONG, .bad = 0 };
	bpf_loop(2 * RTS_LONG, scan_step, &c, 0);
	if (c.bad || c.len >= 2 * RTS_LONG)
		return -1;
	if (c.len == 1) {
		/* "/": in no directory. */
		c.bits = 0;
		c.last_dir = 0;
	}
	struct rts_kpath_val *v = c.len < RTS_PATH_MAX ? bpf_map_lookup_elem(&rts_kpaths, &s->key) : 0;
	*bits = c.bits | c.last_dir | (v ? v->exact : 0);
	return 0;
}

static __always_inline __u32 mask8191(__u32 v)
{
	asm volatile("%[v] &= 8191" : [v] "+r"(v));
	return v;
}

/* The walk from a dentry (of a vfsmount) up to the caller's root (bpf-common/rtctl-walk.h; bpf_d_path is not
 * allowed in the path_* hooks). The one way this plane names a directory (a relative path's) or the object of a
 * call (in the LSM hooks). */

/* Puts '/' and the name of dentry d in front of the name so far; -1 when it does not fit. */
static __always_inline int put_name(struct rts_dscratch *s, struct walk_ctx *c, struct dentry *d)
{
	__u32 len = BPF_CORE_READ(d, d_name.len);
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	if (len == 0 || len >= RTS_PATH_MAX || c->pos < len + 1)
		return -1;
	c->pos -= len;
	if (bpf_probe_read_kernel(&s->norm[mask4095(c->pos)], mask255(len), name) < 0)
		return -1;
	c->pos -= 1;
	s->norm[mask4095(c->pos)] = '/';
	return 0;
}

static long walk_step(__u32 i, void *data)
{
	struct walk_ctx *c = data;
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s) {
		c->bad = 1;
		return 1;
	}
	struct dentry *d, *parent;
	int climbed = walk_climb(c, &d, &parent);
	if (climbed >= 0)
		return climbed;
	if (put_name(s, c, d) < 0) {
		c->bad = 1;
		return 1;
	}
	c->dentry = (__u64)parent;
	return 0;
}

/* Names (dentry, vfsmnt) as the caller's root names it, followed by '/' and the name of `leaf` when it is not 0
 * (a directory and the entry a path_* hook acts on), into norm[pos .. RTS_LONG); returns pos, -1 when it cannot
 * be named (outside the caller's root, deeper or longer than RTS_LONG). */
static __always_inline int walk_up(struct rts_dscratch *s, __u64 dentry, __u64 vfsmnt, __u64 leaf)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct fs_struct *fs = task->fs;
	if (!fs || !dentry || !vfsmnt)
		return -1;
	struct walk_ctx c = {
		.dentry = dentry,
		.vfsmnt = vfsmnt,
		.root_dentry = (__u64)BPF_CORE_READ(fs, root.dentry),
		.root_mnt = (__u64)BPF_CORE_READ(fs, root.mnt),
		.pos = RTS_LONG,
		.done = 0,
		.bad = 0,
	};
	if (leaf && put_name(s, &c, (struct dentry *)leaf) < 0)
		return -1;
	bpf_loop(RTS_WALK_STEPS, walk_step, &c, 0);
	if (c.bad || !c.done || c.pos > RTS_LONG)
		return -1;
	return c.pos;
}

/* The object a path_* hook (or file_open, sb_mount, ...) acts on, named from the kernel's objects as the caller's
 * root names it, into s->str. -1 when it cannot be named. */
__noinline int rts_object_path(__u64 dentry, __u64 vfsmnt, __u64 leaf)
{
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s)
		return -1;
	int pos = walk_up(s, dentry, vfsmnt, leaf);
	if (pos < 0)
		return -1;
	__u32 n = RTS_LONG - (__u32)pos;
	if (n == 0) {
		/* The caller's root itself. */
		s->str[0] = '/';
		s->str[1] = 0;
		return 0;
	}
	if (n >= RTS_LONG - 1 || bpf_probe_read_kernel(s->str, mask4095(n), &s->norm[mask4095(pos)]) < 0)
		return -1;
	s->str[mask4095(n)] = 0;
	return 0;
}

/* A relative path of a call: s->str becomes the directory it is relative to (the working directory for
 * AT_FDCWD, else the directory fd's), as the caller's root names it, '/', and the path. -1 when it cannot be
 * named (not an open fd, a directory outside the caller's root, too long). */
__noinline int rts_resolve(__s32 dirfd)
{
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s)
		return -1;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct fs_struct *fs = task->fs;
	if (!fs)
		return -1;
	__u64 dentry = (__u64)BPF_CORE_READ(fs, pwd.dentry), vfsmnt = (__u64)BPF_CORE_READ(fs, pwd.mnt);
	if (dirfd != AT_FDCWD) {
		if (dirfd < 0)
			return -1;
		struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
		if (!fdt || (__u32)dirfd >= BPF_CORE_READ(fdt, max_fds))
			return -1;
		struct file **fds = BPF_CORE_READ(fdt, fd);
		struct file *f = 0;
		if (bpf_probe_read_kernel(&f, sizeof(f), &fds[dirfd]) < 0 || !f)
			return -1;
		dentry = (__u64)BPF_CORE_READ(f, f_path.dentry);
		vfsmnt = (__u64)BPF_CORE_READ(f, f_path.mnt);
	}
	int pos = walk_up(s, dentry, vfsmnt, 0);
	if (pos < 0)
		return -1;
	__u32 n = RTS_LONG - (__u32)pos; /* length of the directory's name ("" for the root) */
	if (n >= RTS_LONG - 1)
		return -1;
	if (n > 0 && bpf_probe_read_kernel(s->str, mask4095(n), &s->norm[mask4095(pos)]) < 0)
		return -1;
	s->str[mask4095(n)] = '/';
	__u32 at = mask4095(n + 1);
	if (bpf_probe_read_kernel_str(&s->str[at], RTS_LONG, s->path) < 0)
		return -1;
	return 0;
}

/* Normalising s->str into s->norm, one byte at a time, as the oracle's normalizeAbsolutePath does. */
struct norm_ctx {
	__u32 w;     /* bytes written to norm */
	__u32 seg;   /* where the current segment starts in norm (its '/') */
	__u32 depth; /* segments kept (s->segs) */
	__u32 bad;
};

static long norm_step(__u32 i, void *data)
{
	struct norm_ctx *c = data;
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s || c->w >= 2 * RTS_LONG - 2) {
		c->bad = 1;
		return 1;
	}
	char ch = s->str[i & (2 * RTS_LONG - 1)];
	if (ch != '/' && ch != 0) {
		s->norm[c->w & (2 * RTS_LONG - 1)] = ch;
		c->w++;
		return 0;
	}
	/* The end of a segment (norm[seg] is its '/'): drop it when empty or `.`, drop it and the one before for
	 * `..`, else keep it. */
	if (i > 0) {
		__u32 len = c->w - c->seg - 1;
		char a = s->norm[(c->seg + 1) & (2 * RTS_LONG - 1)];
		char b = s->norm[(c->seg + 2) & (2 * RTS_LONG - 1)];
		if (len == 0 || (len == 1 && a == '.')) {
			c->w = c->seg;
		} else if (len == 2 && a == '.' && b == '.') {
			if (c->depth > 0) {
				c->depth--;
				c->w = s->segs[c->depth & (RTS_LONG - 1)];
			} else {
				c->w = 0;
			}
		} else {
			if (c->depth >= RTS_LONG) {
				c->bad = 1;
				return 1;
			}
			s->segs[c->depth & (RTS_LONG - 1)] = c->seg;
			c->depth++;
		}
	}
	if (ch == 0)
		return 1;
	c->seg = c->w;
	s->norm[c->w & (2 * RTS_LONG - 1)] = '/';
	c->w++;
	return 0;
}

/* s->str (absolute) normalised in place: `.` and `..` resolved, no repeated or trailing '/' (but the root). */
static __always_inline int normalise(struct rts_dscratch *s)
{
	if (s->str[0] != '/')
		return -1;
	__u32 z = s->unknown0;
	struct norm_ctx c = { .w = z, .seg = z, .depth = z, .bad = 0 };
	bpf_loop(2 * RTS_LONG, norm_step, &c, 0);
	if (c.bad || c.w >= 2 * RTS_LONG - 2)
		return -1;
	if (c.w == 0) {
		s->str[0] = '/';
		s->str[1] = 0;
		return 0;
	}
	__u32 n = mask8191(c.w);
	if (bpf_probe_read_kernel(s->str, n, s->norm) < 0)
		return -1;
	s->str[mask8191(n)] = 0;
	return 0;
}

/* The rules whose path (kind RTS_KPATH_CALL) or source (RTS_KPATH_SOURCE) matches s->str, normalised, into
 * s->bits; -1 when it cannot be decided. A function of its own (verified once, not at each call). */
__noinline int rts_match(__u32 wid, __u32 nr, __u32 kind)
{
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s)
		return -1;
	__u64 bits = 0;
	if (normalise(s) < 0 || scan(s, wid, nr, (__u8)kind, &bits) < 0)
		return -1;
	s->bits = bits;
	return 0;
}

static __always_inline int lowest_bit(__u64 m)
{
	int n = 0;
	if (!(m & 0xffffffffULL)) { n += 32; m >>= 32; }
	if (!(m & 0xffffULL)) { n += 16; m >>= 16; }
	if (!(m & 0xffULL)) { n += 8; m >>= 8; }
	if (!(m & 0xfULL)) { n += 4; m >>= 4; }
	if (!(m & 0x3ULL)) { n += 2; m >>= 2; }
	if (!(m & 0x1ULL)) n += 1;
	return n;
}

/* Decides a covered call on its rules: the first (in precedence order) whose path and source match. The path
 * argument is in s->path (empty: the call names none). */
static __always_inline __u8 pick_rule(struct rts_dscratch *s, struct rts_decide *d, __u64 pathm, __u32 wid,
				      __u32 nr, __u32 tgid, __u32 *rule);

static __always_inline __u8 decide_call(struct rts_dscratch *s, struct rts_decide *d, __u32 wid, __u32 nr,
					__u32 tgid, __s32 dirfd, __u32 *rule, int *resolved)
{
	if (d->flags & RTS_DECIDE_OVERFLOW)
		return RTS_VERDICT_UNDECIDED;
	__u64 pathm = d->nopath;
	if ((pathm & d->valid) != d->valid && s->path[0] != 0) {
		if (s->truncated)
			return RTS_VERDICT_UNDECIDED;
		if (s->path[0] == '/') {
			if (bpf_probe_read_kernel_str(s->str, RTS_LONG, s->path) < 0)
				return RTS_VERDICT_UNDECIDED;
		} else {
			if (rts_resolve(dirfd) < 0)
				return RTS_VERDICT_UNDECIDED;
			*resolved = 1;
		}
		if (rts_match(wid, nr, RTS_KPATH_CALL) < 0)
			return RTS_VERDICT_UNDECIDED;
		pathm |= s->bits;
		/* The event names the path as decided (a relative one made absolute). */
		if (*resolved && bpf_probe_read_kernel_str(s->path, RTS_LONG, s->str) < 0)
			return RTS_VERDICT_UNDECIDED;
	}
	return pick_rule(s, d, pathm, wid, nr, tgid, rule);
}

/* The rules of a call whose path matches (pathm) decided: the first (in precedence order) whose source matches
 * too. */
static __always_inline __u8 pick_rule(struct rts_dscratch *s, struct rts_decide *d, __u64 pathm, __u32 wid,
				      __u32 nr, __u32 tgid, __u32 *rule)
{
	__u64 srcm = d->nosource;
	if ((srcm & d->valid) != d->valid) {
		struct rts_exe *x = bpf_map_lookup_elem(&rts_exe, &tgid);
		/* Unknown, or perhaps cut to the 255 bytes rts_exe keeps. */
		if (!x || x->path[RTS_PATH_MAX - 2] != 0)
			return RTS_VERDICT_UNDECIDED;
		if (bpf_probe_read_kernel_str(s->str, RTS_PATH_MAX, x->path) < 0)
			return RTS_VERDICT_UNDECIDED;
		if (rts_match(wid, nr, RTS_KPATH_SOURCE) < 0)
			return RTS_VERDICT_UNDECIDED;
		srcm |= s->bits;
	}
	__u64 m = pathm & srcm & d->valid;
	if (!m)
		return RTS_VERDICT_ALLOW;
	int i = lowest_bit(m) & (RTS_DECIDE_RULES - 1);
	*rule = d->index[i];
	return (d->block >> i) & 1 ? RTS_VERDICT_DENY : RTS_VERDICT_ALLOW;
}

/* The decision of a call in a hook, on the object it acts on ((dentry, vfsmnt), and `leaf` in that directory):
 * the verdict, with the rule in s->rule and the object's name in s->path (empty when it cannot be named). */
__noinline int rts_object_decide(__u64 dentry, __u64 vfsmnt, __u64 leaf, __u32 wid, __u32 nr)
{
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s)
		return RTS_VERDICT_UNDECIDED;
	s->rule = ~0U;
	s->path[0] = 0;
	struct rts_watch_key key = { .wid = wid, .nr = nr };
	struct rts_decide *d = bpf_map_lookup_elem(&rts_decide, &key);
	if (!d || (d->flags & RTS_DECIDE_OVERFLOW))
		return RTS_VERDICT_UNDECIDED;
	if (rts_object_path(dentry, vfsmnt, leaf) < 0 || rts_match(wid, nr, RTS_KPATH_CALL) < 0)
		return RTS_VERDICT_UNDECIDED;
	__u64 pathm = d->nopath | s->bits;
	if (bpf_probe_read_kernel_str(s->path, RTS_LONG, s->str) < 0)
		s->path[0] = 0;
	__u32 rule = ~0U;
	__u8 v = pick_rule(s, d, pathm, wid, nr, bpf_get_current_pid_tgid() >> 32, &rule);
	s->rule = rule;
	return v;
}

/* Leaves the thread's deny record for this call (or clears a record left by an earlier call). */
static __always_inline void record_verdict(__u32 nr, __u8 verdict, __u64 hooks)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	__u32 zero = 0;
	struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
	int deny = verdict == RTS_VERDICT_DENY;
	struct rts_deny *r =
		bpf_task_storage_get(&rts_deny, task, 0, deny ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!r)
		return;
	r->deny = deny;
	r->mode = RTS_MODE_STRING;
	r->nr = nr;
	r->hooks = hooks;
	r->epoch = cfg ? cfg->epoch : 0;
}

/* The event of a watched call (its arguments, the path as read, the caller). */
static __always_inline void fill_call(struct rts_event *e, struct pt_regs *regs, int compat, __u32 nr,
				      struct rts_watch *watch, struct rts_workload *w, __u64 cgroup, __u8 verdict,
				      __u32 rule, const char *path)
{
	e->kind = RTS_EVENT_SYSCALL;
	e->nr = nr;
	if (compat) {
		/* 32-bit arguments: an int dirfd (AT_FDCWD) is sign-extended as a 64-bit call's would be. */
		e->args[0] = (__u64)(__s64)(__s32)regs->bx;
		e->args[1] = (__u64)(__s64)(__s32)regs->cx;
		e->args[2] = (__u64)(__s64)(__s32)regs->dx;
		e->args[3] = (__u64)(__s64)(__s32)regs->si;
		e->args[4] = (__u64)(__s64)(__s32)regs->di;
		e->args[5] = (__u64)(__s64)(__s32)regs->bp;
	} else {
		e->args[0] = regs->di;
		e->args[1] = regs->si;
		e->args[2] = regs->dx;
		e->args[3] = regs->r10;
		e->args[4] = regs->r8;
		e->args[5] = regs->r9;
	}
	e->nlink = 0;
	e->action = RTS_ACTION_AUDIT;
	e->path_arg = watch->path_arg;
	e->dirfd_arg = watch->dirfd_arg;
	e->pad = 0;
	e->name[0] = 0;
	e->rule = rule;
	e->verdict = verdict;
	__builtin_memset(e->pad2, 0, sizeof(e->pad2));
	/* The event carries the path's first RTS_PATH_MAX - 1 bytes. */
	if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), path) < 0)
		e->path[0] = 0;
	fill_common(e, w, cgroup);
}

/* Whether a watched call's path rules are decided in its hook, on the object (RTS_MODE_HOOK): it names a path,
 * some rule has one, and every hook it reaches receives the object. Nothing the caller's memory holds decides
 * this (an empty or unreadable string included: the kernel may still act on an object). */
static __always_inline int decided_on_object(struct rts_watch *watch, struct rts_decide *d)
{
	__u32 zero = 0;
	struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
	return cfg && cfg->objects && watch->path_arg >= 0 && (d->nopath & d->valid) != d->valid &&
	       !(d->flags & RTS_DECIDE_OVERFLOW) && d->hooks && (d->hooks & ~RTS_OBJECT_HOOKS) == 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(rts_sys_enter, struct pt_regs *regs, long id)
{
	if (id < 0 || id >= RTS_NR_MAX)
		return 0;
	/* raw: the number as the thread's orig_ax holds it (what the LSM hooks compare); nr: the x86-64 number. */
	__u32 raw = (__u32)id, nr = raw;
	struct task_struct *me = (struct task_struct *)bpf_get_current_task_btf();
	int compat = (me->thread_info.status & RTS_TS_COMPAT) != 0;
	if (compat) {
		__u32 *x = bpf_map_lookup_elem(&rts_compat, &raw);
		if (!x || !*x || *x > RTS_NR_MAX)
			return 0;
		nr = *x - 1;
	}
	__u32 *watched = bpf_map_lookup_elem(&rts_nrs, &nr);
	if (!watched || !*watched)
		return 0;
	__u64 cgroup = 0;
	struct rts_workload *w = current_workload(&cgroup);
	if (!w)
		return 0;
	struct rts_watch_key key = { .wid = w->wid, .nr = nr };
	struct rts_watch *watch = bpf_map_lookup_elem(&rts_watch, &key);
	if (!watch)
		return 0;
	count(RTS_COUNTER_SEEN);
	__u32 zero = 0;
	struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
	if (!s)
		return 0;
	s->path[0] = 0;
	s->truncated = 0;
	if (watch->path_arg >= 0 && watch->path_arg < 6) {
		const char *up = 0;
		switch (watch->path_arg) {
		case 0: up = (const char *)(compat ? regs->bx : regs->di); break;
		case 1: up = (const char *)(compat ? regs->cx : regs->si); break;
		case 2: up = (const char *)(compat ? regs->dx : regs->dx); break;
		case 3: up = (const char *)(compat ? regs->si : regs->r10); break;
		case 4: up = (const char *)(compat ? regs->di : regs->r8); break;
		case 5: up = (const char *)(compat ? regs->bp : regs->r9); break;
		}
		long got = bpf_probe_read_user_str(s->path, sizeof(s->path), up);
		if (got < 0)
			s->path[0] = 0;
		/* A full buffer: a path the kernel itself refuses (ENAMETOOLONG), or unreadable; not decided on. */
		s->truncated = got >= (long)sizeof(s->path);
	}
	/* The kernel decision, where the call is covered (before the event: a full ring buffer loses the alert, which
	 * is counted, never the denial). */
	__u8 verdict = RTS_VERDICT_NONE;
	__u32 rule = ~0U;
	struct rts_decide *d = bpf_map_lookup_elem(&rts_decide, &key);
	if (d && decided_on_object(watch, d)) {
		/* Decided by the first hook the call reaches; the event waits in the record for sys_exit. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
		struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
		struct rts_deny *r = bpf_task_storage_get(&rts_deny, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!r || !cfg) {
			count(RTS_COUNTER_DROPPED);
			return 0;
		}
		r->deny = 0;
		r->mode = RTS_MODE_HOOK;
		r->nr = raw;
		r->hooks = d->hooks;
		r->epoch = cfg->epoch;
		r->wid = w->wid;
		r->xnr = nr;
		fill_call(&r->ev, regs, compat, nr, watch, w, cgroup, RTS_VERDICT_UNREACHED, ~0U, s->path);
		return 0;
	}
	if (d) {
		__s32 dirfd = AT_FDCWD;
		switch (watch->dirfd_arg) {
		case 0: dirfd = (__s32)(compat ? regs->bx : regs->di); break;
		case 1: dirfd = (__s32)(compat ? regs->cx : regs->si); break;
		case 2: dirfd = (__s32)regs->dx; break;
		}
		int resolved = 0;
		verdict = decide_call(s, d, w->wid, nr, bpf_get_current_pid_tgid() >> 32, dirfd, &rule, &resolved);
		record_verdict(raw, verdict, d->hooks);
	} else {
		record_verdict(raw, RTS_VERDICT_NONE, 0);
	}
	struct rts_event *e = bpf_ringbuf_reserve(&rts_events, sizeof(*e), 0);
	if (!e) {
		count(RTS_COUNTER_DROPPED);
		return 0;
	}
	fill_call(e, regs, compat, nr, watch, w, cgroup, verdict, rule, s->path);
	bpf_ringbuf_submit(e, 0);
	count(RTS_COUNTER_REPORTED);
	return 0;
}

/* Reports the event of a call decided in its hook (RTS_MODE_HOOK), once the call is over: the object's path and
 * the hook's verdict, or RTS_VERDICT_UNREACHED when it reached no hook. Attached with sys_enter. */
SEC("tp_btf/sys_exit")
int BPF_PROG(rts_sys_exit, struct pt_regs *regs, long ret)
{
	/* Nothing to report where no call is decided in a hook (a node without the LSM hooks): one array lookup. */
	__u32 zero = 0;
	struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
	if (!cfg || !cfg->objects)
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct rts_deny *r = bpf_task_storage_get(&rts_deny, task, 0, 0);
	if (!r || (r->mode != RTS_MODE_HOOK && r->mode != RTS_MODE_DECIDED) || regs->orig_ax != (long)r->nr)
		return 0;
	r->mode = RTS_MODE_DONE;
	r->deny = 0;
	if (bpf_ringbuf_output(&rts_events, &r->ev, sizeof(r->ev), 0) < 0) {
		count(RTS_COUNTER_DROPPED);
		return 0;
	}
	count(RTS_COUNTER_REPORTED);
	return 0;
}

/* Reports a fileless exec (and kills it when the preset blocks); the event's `exe` is the executable that called
 * exec, `path` the file name exec was given. */
static __always_inline void check_fileless(struct linux_binprm *bprm, struct rts_exe *x)
{
	struct file *file = bprm->file;
	if (!file)
		return;
	__u32 nlink = file->f_inode->i_nlink;
	if (nlink != 0)
		return;
	__u64 cgroup = 0;
	struct rts_workload *w = current_workload(&cgroup);
	if (!w || w->fileless == RTS_ACTION_NONE)
		return;
	__u8 action = w->fileless;
	if (action == RTS_ACTION_BLOCK)
		bpf_send_signal(SIGKILL);
	count(RTS_COUNTER_SEEN);
	struct rts_event *e = bpf_ringbuf_reserve(&rts_events, sizeof(*e), 0);
	if (!e) {
		count(RTS_COUNTER_DROPPED);
		return;
	}
	__builtin_memset(e->args, 0, sizeof(e->args));
	e->kind = RTS_EVENT_FILELESS;
	e->nr = 0;
	e->nlink = nlink;
	e->action = action;
	e->path_arg = -1;
	e->dirfd_arg = -1;
	e->pad = 0;
	e->rule = ~0U;
	e->verdict = RTS_VERDICT_NONE;
	__builtin_memset(e->pad2, 0, sizeof(e->pad2));
	fill_common(e, w, cgroup);
	__builtin_memcpy(e->path, x->path, sizeof(e->path));
	if (bpf_probe_read_kernel_str(e->name, sizeof(e->name), file->f_path.dentry->d_name.name) < 0)
		e->name[0] = 0;
	bpf_ringbuf_submit(e, 0);
	count(RTS_COUNTER_REPORTED);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(rts_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 zero = 0;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct rts_exe *x = bpf_map_lookup_elem(&rts_scratch, &zero);
	if (!x)
		return 0;
	if (bpf_probe_read_kernel_str(x->path, sizeof(x->path), bprm->filename) < 0)
		x->path[0] = 0;
	check_fileless(bprm, x);
	bpf_map_update_elem(&rts_exe, &tgid, x, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(rts_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid != child->tgid)
		return 0;
	__u32 from = parent->tgid, to = child->pid;
	struct rts_exe *x = bpf_map_lookup_elem(&rts_exe, &from);
	if (x)
		bpf_map_update_elem(&rts_exe, &to, x, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(rts_exit, struct task_struct *p)
{
	if (p->pid != p->tgid)
		return 0;
	__u32 tgid = p->tgid;
	bpf_map_delete_elem(&rts_exe, &tgid);
	return 0;
}

/* ---- the deny part: LSM hooks that carry out a sys_enter Block (attached only where LSM programs load) ---- */

/* -EACCES when the current thread's deny record names this hook and its current call (orig_ax), under the
 * state the record was written in. */
static __always_inline int deny_hook(__u32 hook)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct rts_deny *r = bpf_task_storage_get(&rts_deny, task, 0, 0);
	if (!r || !r->deny || !(r->hooks & (1ULL << hook)))
		return 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || regs->orig_ax != (long)r->nr)
		return 0;
	__u32 zero = 0;
	struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
	if (!cfg || cfg->epoch != r->epoch)
		return 0;
	count(RTS_COUNTER_DENIED);
	return -EACCES;
}

/* A kernel pointer as a plain number (a global function takes no BTF pointer). */
static __always_inline __u64 scalar_of(const void *p)
{
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* A hook that receives the object of the call ((dentry, vfsmnt), and `leaf` in that directory): the first such
 * hook a call in RTS_MODE_HOOK reaches decides its path rules on the object, then as deny_hook. */
static __always_inline int object_hook(__u32 hook, __u64 dentry, __u64 vfsmnt, __u64 leaf)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct rts_deny *r = bpf_task_storage_get(&rts_deny, task, 0, 0);
	if (!r || !(r->hooks & (1ULL << hook)))
		return 0;
	if (r->mode == RTS_MODE_HOOK) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
		__u32 zero = 0;
		struct rts_config *cfg = bpf_map_lookup_elem(&rts_config, &zero);
		if (!regs || regs->orig_ax != (long)r->nr || !cfg || cfg->epoch != r->epoch)
			return 0;
		__u8 v = (__u8)rts_object_decide(dentry, vfsmnt, leaf, r->wid, r->xnr);
		struct rts_dscratch *s = bpf_map_lookup_elem(&rts_dscratch, &zero);
		r->mode = RTS_MODE_DECIDED;
		r->deny = v == RTS_VERDICT_DENY;
		r->ev.verdict = v;
		r->ev.rule = s ? s->rule : ~0U;
		if (s && s->path[0] == '/')
			bpf_probe_read_kernel_str(r->ev.path, sizeof(r->ev.path), s->path);
	}
	return deny_hook(hook);
}

#define RTS_LSM(hook, bit)                                    \
	SEC("lsm/" #hook)                                     \
	int rts_lsm_##hook(unsigned long long *ctx)           \
	{                                                     \
		return deny_hook(bit);                        \
	}

/* The object hooks (RTS_OBJECT_HOOKS): the path rules of the call are decided on what the kernel acts on. */
SEC("lsm/file_open")
int BPF_PROG(rts_lsm_file_open, struct file *file)
{
	return object_hook(RTS_HOOK_FILE_OPEN, (__u64)BPF_CORE_READ(file, f_path.dentry),
			   (__u64)BPF_CORE_READ(file, f_path.mnt), 0);
}

/* A directory and the entry in it the call removes, makes or renames (the source of a rename: the path the
 * call's path argument names). */
#define RTS_LSM_ENTRY(hook, bit)                                                                          \
	SEC("lsm/" #hook)                                                                                  \
	int BPF_PROG(rts_lsm_##hook, const struct path *dir, struct dentry *dentry)                       \
	{                                                                                                  \
		return object_hook(bit, (__u64)BPF_CORE_READ(dir, dentry), (__u64)BPF_CORE_READ(dir, mnt), \
				   scalar_of(dentry));                                                     \
	}

/* The object itself (a chmod, chown, truncate, chroot, mount point). */
#define RTS_LSM_PATH(hook, bit)                                                                           \
	SEC("lsm/" #hook)                                                                                  \
	int BPF_PROG(rts_lsm_##hook, const struct path *path)                                              \
	{                                                                                                  \
		return object_hook(bit, (__u64)BPF_CORE_READ(path, dentry), (__u64)BPF_CORE_READ(path, mnt), 0); \
	}

RTS_LSM_ENTRY(path_unlink, RTS_HOOK_PATH_UNLINK)
RTS_LSM_ENTRY(path_rmdir, RTS_HOOK_PATH_RMDIR)
RTS_LSM_ENTRY(path_mkdir, RTS_HOOK_PATH_MKDIR)
RTS_LSM_ENTRY(path_rename, RTS_HOOK_PATH_RENAME)
RTS_LSM_PATH(path_chmod, RTS_HOOK_PATH_CHMOD)
RTS_LSM_PATH(path_chown, RTS_HOOK_PATH_CHOWN)

/* link(old, new): the existing file (the path argument); a link stays in its mount, the new directory's. */
SEC("lsm/path_link")
int BPF_PROG(rts_lsm_path_link, struct dentry *old_dentry, const struct path *new_dir)
{
	return object_hook(RTS_HOOK_PATH_LINK, (__u64)BPF_CORE_READ(old_dentry, d_parent),
			   (__u64)BPF_CORE_READ(new_dir, mnt), scalar_of(old_dentry));
}

/* symlink(target, linkpath): the new link (the path argument); the target is a string, not resolved. */
RTS_LSM_ENTRY(path_symlink, RTS_HOOK_PATH_SYMLINK)
RTS_LSM_ENTRY(path_mknod, RTS_HOOK_PATH_MKNOD)
RTS_LSM_PATH(path_truncate, RTS_HOOK_PATH_TRUNCATE)
RTS_LSM_PATH(path_chroot, RTS_HOOK_PATH_CHROOT)

/* mount(source, target, ...): the mount point (the path argument); the source is a string for the filesystem. */
SEC("lsm/sb_mount")
int BPF_PROG(rts_lsm_sb_mount, const char *dev_name, const struct path *path)
{
	return object_hook(RTS_HOOK_SB_MOUNT, (__u64)BPF_CORE_READ(path, dentry), (__u64)BPF_CORE_READ(path, mnt), 0);
}

/* umount2(target): the mount's root, named at its mount point. */
SEC("lsm/sb_umount")
int BPF_PROG(rts_lsm_sb_umount, struct vfsmount *mnt)
{
	return object_hook(RTS_HOOK_SB_UMOUNT, (__u64)BPF_CORE_READ(mnt, mnt_root), scalar_of(mnt), 0);
}
RTS_LSM(sb_pivotroot, RTS_HOOK_SB_PIVOTROOT)
RTS_LSM(ptrace_access_check, RTS_HOOK_PTRACE_ACCESS_CHECK)
RTS_LSM(ptrace_traceme, RTS_HOOK_PTRACE_TRACEME)
RTS_LSM(kernel_read_file, RTS_HOOK_KERNEL_READ_FILE)
RTS_LSM(kernel_load_data, RTS_HOOK_KERNEL_LOAD_DATA)
RTS_LSM(task_fix_setuid, RTS_HOOK_TASK_FIX_SETUID)
RTS_LSM(task_fix_setgid, RTS_HOOK_TASK_FIX_SETGID)
RTS_LSM(task_kill, RTS_HOOK_TASK_KILL)
RTS_LSM(socket_create, RTS_HOOK_SOCKET_CREATE)
RTS_LSM(socket_connect, RTS_HOOK_SOCKET_CONNECT)
RTS_LSM(socket_bind, RTS_HOOK_SOCKET_BIND)
RTS_LSM(socket_listen, RTS_HOOK_SOCKET_LISTEN)
RTS_LSM(settime, RTS_HOOK_SETTIME)
RTS_LSM(bpf, RTS_HOOK_BPF)
/* execve: the file exec opened (the first check of a call decides: a script's, not its interpreter's). */
SEC("lsm/bprm_check_security")
int BPF_PROG(rts_lsm_bprm_check_security, struct linux_binprm *bprm)
{
	struct file *f = bprm->file;
	if (!f)
		return deny_hook(RTS_HOOK_BPRM_CHECK);
	return object_hook(RTS_HOOK_BPRM_CHECK, (__u64)BPF_CORE_READ(f, f_path.dentry),
			   (__u64)BPF_CORE_READ(f, f_path.mnt), 0);
}
