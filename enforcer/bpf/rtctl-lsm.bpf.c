// SPDX-License-Identifier: GPL-2.0
/* rtctl BPF-LSM data plane: decides exec, file open, socket create/connect and capable() for the
 * workloads in rt_workloads from the rule maps the loader fills from the compiled rule table
 * (docs/rule-table.md "Lookup walk"; map layouts in rtctl-maps.h; design in docs/bpf-lsm.md).
 * Block returns -EACCES; Block, Audit and posture decisions are reported on the rt_events ring
 * buffer, and reports that do not fit are counted in rt_counters.dropped. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "rtctl-maps.h"
#include "rtctl-addr-maps.h"

char LICENSE[] SEC("license") = "GPL";

#define EACCES 13
#define FMODE_WRITE 0x2
#define RT_FMODE_EXEC 0x20 /* __FMODE_EXEC in f_flags: the open of an exec, decided as Process */
#define AF_INET 2
#define AF_INET6 10
#define AF_PACKET 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define IPPROTO_ICMP 1
#define IPPROTO_ICMPV6 58
#define CAP_OPT_NOAUDIT 2
#define RT_NONE 0xffffffffu

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rt_config);
} rt_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RT_MAX_INDEX * 2);
	__type(key, struct rt_index_key);
	__type(value, struct rt_index_val);
} rt_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_MAX_RULES * 2);
	__type(key, __u32);
	__type(value, struct rt_rule);
} rt_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_MAX_PATTERNS * 2);
	__type(key, __u32);
	__type(value, struct rt_pattern);
} rt_patterns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RT_MAX_SOURCE_KEYS * 2);
	__type(key, struct rt_source_key);
	__type(value, struct rt_source_val);
} rt_sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RT_MAX_WORKLOADS * 2);
	__type(key, struct rt_workload_key);
	__type(value, struct rt_workload);
} rt_workloads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_MAX_WORKLOADS * 2);
	__type(key, __u32);
	__type(value, struct rt_wname);
} rt_wnames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} rt_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rt_counters);
} rt_counters SEC(".maps");

/* The file_open and exec decision cache (rtctl-maps.h struct rt_dslot): a direct-mapped array, so a hit costs
 * an inlined array lookup and a compare of the key's words, not a hash of the key. An entry is used only
 * while its stamp equals the current one: rt_epoch[0], which the loader moves on after every slot flip,
 * and the sequence counts of the kernel's rename_lock (every d_move: a rename of the file or of any
 * directory above it) and mount_lock (every change of the mount tree). The two are seqlocks, read
 * as the kernel's own readers do: an odd count is a change in progress, and nothing is stored then.
 * Two keys that fall on one slot take turns: a store overwrites (see dcache_store for the slot's own
 * sequence word, which keeps a slot being written from ever being read as a hit). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_DCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct rt_dslot);
} rt_dcache SEC(".maps");

/* The workload of each task as last found (rtctl-maps.h struct rt_task_wl; task_workload). Not pinned: only
 * the programs use it, and it lives as long as they are attached. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rt_task_wl);
} rt_task_wl SEC(".maps");

/* Typeless kernel symbols (resolved through kallsyms; 0 where absent, and then nothing is cached). */
extern const void rename_lock __ksym __weak;
extern const void mount_lock __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rt_epoch SEC(".maps"); /* written by the loader only */

/* Executable paths by struct file address of mm->exe_file, remembered where bpf_d_path is allowed
 * (exec, open, socket hooks) for the capable() hook where it is not. */
struct rt_path {
	char p[RT_PATH_MAX];
	__u32 len;
	__u32 pad;
};
struct rt_exe_key {
	__u64 file;   /* address of the struct file */
	__u64 ino;    /* its inode number: a reused address names another inode */
	__u64 dentry; /* address of its dentry: a reused address of a file of the same inode under another
		       * name (a hard link: busybox's /bin/sh and /bin/cat) has another dentry */
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct rt_exe_key);
	__type(value, struct rt_path);
} rt_exe_cache SEC(".maps");

/* Per-CPU working memory of one decision (the BPF stack is 512 bytes). */
struct scratch {
	struct rt_index_key ikey;
	struct rt_source_key skey;
	char res[RT_PATH_MAX];
	char actor[RT_PATH_MAX];
	char parent[RT_PATH_MAX];
	char tmp[RT_PATH_MAX];
	struct rt_path cache_value;
	struct rt_workload wl;
	__u64 abits[RT_SRC_WORDS];
	__u32 cand[RT_MAX_PATTERN_CANDIDATES];
	__u64 gstate;
	__u32 gpat;
	__u32 ncand;
	__u32 res_len;
	__u32 actor_len;
	__u32 slot;
	__u32 generation;
	__u32 best;
	__u32 last_slash;
	__u32 seen_parent;
	__u8 cls;
	__u8 write;
	__u8 owner;
	__u8 tty;
	__u8 silent; /* set by conclude: the answer was "allow without alert" */
	__u8 icmp_too; /* Network: a raw ICMP socket, named icmp besides s->res (raw) */
	__u8 pad[6];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} rt_scratch SEC(".maps");

static const __u32 zero = 0;

/* An index into a RT_PATH_MAX array, masked in a way the compiler cannot drop (the verifier needs it). */
static __always_inline __u32 pidx(__u32 v)
{
	asm volatile("%[v] &= 255" : [v] "+r"(v));
	return v;
}

static __always_inline struct scratch *get_scratch(void)
{
	return bpf_map_lookup_elem(&rt_scratch, &zero);
}

static __always_inline void count(int which)
{
	struct rt_counters *c = bpf_map_lookup_elem(&rt_counters, &zero);
	if (!c)
		return;
	if (which == 0)
		c->decisions++;
	else if (which == 3) {
		c->decisions++;
		c->cache_hits++;
	} else if (which == 1)
		c->events++;
	else
		c->dropped++;
}

/* ---- rule evaluation ---------------------------------------------------------------------- */

static __always_inline void eval_rule(struct scratch *s, __u32 r, __u8 kind, int is_parent)
{
	if (r >= RT_MAX_RULES || r >= s->best)
		return;
	__u32 idx = s->slot * RT_MAX_RULES + r;
	struct rt_rule *rule = bpf_map_lookup_elem(&rt_rules, &idx);
	if (!rule || !rule->present)
		return;
	__u32 p = rule->policy;
	if (p >= RT_POL_WORDS * 64)
		return;
	if (!(s->wl.policies[(p >> 6) & (RT_POL_WORDS - 1)] & (1ULL << (p & 63))))
		return;
	__u8 flags = rule->flags;
	if (kind == RT_NODE_DIR && !is_parent && !(flags & RT_FLAG_RECURSIVE))
		return;
	if (flags & RT_FLAG_SOURCES) {
		__u64 any = 0;
		for (int k = 0; k < RT_SRC_WORDS; k++)
			any |= rule->sources[k] & s->abits[k];
		if (!any)
			return;
	}
	if ((flags & RT_FLAG_PTS) && !s->tty)
		return;
	/* allowedArgs: the argument list is not read by this plane (unknown = none, as the oracle treats it). */
	int exempt = (flags & (RT_FLAG_READONLY | RT_FLAG_OWNERONLY)) != 0;
	int acceptable = (!(flags & RT_FLAG_READONLY) || !s->write) && (!(flags & RT_FLAG_OWNERONLY) || s->owner);
	if (rule->action == RT_ACTION_ALLOW) {
		if (exempt && !acceptable)
			return;
	} else if (exempt && acceptable) {
		return;
	}
	if (kind == RT_NODE_PATTERN_DIR) {
		__u32 n = s->ncand;
		if (n < RT_MAX_PATTERN_CANDIDATES)
			s->cand[n & (RT_MAX_PATTERN_CANDIDATES - 1)] = r;
		s->ncand = n + 1;
		return;
	}
	s->best = r;
}

/* Evaluates the rule list of s->ikey (its class, kind and key already set). */
static __always_inline void eval_list(struct scratch *s, __u8 kind, int is_parent)
{
	s->ikey.kind = kind;
	struct rt_index_val *v = bpf_map_lookup_elem(&rt_index, &s->ikey);
	if (!v)
		return;
	__u32 n = v->count;
	for (int j = 0; j < RT_MAX_REFS; j++) {
		if (j >= n)
			break;
		__u32 r = v->rules[j];
		if (r >= s->best)
			break;
		eval_rule(s, r, kind, is_parent);
	}
}

/* bpf_loop callback: one byte of the resource, from the end; at each ancestor directory D (the
 * prefix ending at a '/'), evaluate L(DIR, D) and L(PATTERN_DIR, D). */
static long walk_resource(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	if (!s)
		return 1;
	__u32 len = s->res_len;
	if (i >= len)
		return 1;
	__u32 pos = len - 1 - i;
	if (pos + 1 < len)
		s->ikey.key[pidx(pos + 1)] = 0;
	if (s->res[pidx(pos)] != '/' || pos + 1 >= len)
		return 0;
	int is_parent = !s->seen_parent;
	s->seen_parent = 1;
	eval_list(s, RT_NODE_DIR, is_parent);
	if (s->wl.features & RT_FEATURE_PATTERNS)
		eval_list(s, RT_NODE_PATTERN_DIR, is_parent);
	return 0;
}

/* bpf_loop callback: the actor's source ids, from its full path and its ancestor directories. */
static long walk_actor(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	if (!s)
		return 1;
	__u32 len = s->actor_len;
	if (i >= len)
		return 1;
	__u32 pos = len - 1 - i;
	if (pos + 1 < len)
		s->skey.key[pidx(pos + 1)] = 0;
	if (s->actor[pidx(pos)] != '/' || pos + 1 >= len)
		return 0;
	int is_parent = !s->seen_parent;
	s->seen_parent = 1;
	struct rt_source_val *v = bpf_map_lookup_elem(&rt_sources, &s->skey);
	if (!v)
		return 0;
	__s32 ids[2] = { is_parent ? v->dir_id : -1, v->dir_rec_id };
	for (int k = 0; k < 2; k++) {
		__s32 id = ids[k];
		if (id >= 0 && id < RT_SRC_WORDS * 64)
			s->abits[(id >> 6) & (RT_SRC_WORDS - 1)] |= 1ULL << (id & 63);
	}
	return 0;
}

static long find_last_slash(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	if (!s || i >= s->res_len)
		return 1;
	if (s->res[pidx(i)] == '/')
		s->last_slash = i;
	return 0;
}

static long copy_basename(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	if (!s)
		return 1;
	__u32 from = s->last_slash + 1 + i;
	if (from >= s->res_len || i >= RT_PATH_MAX - 1)
		return 1;
	s->ikey.key[pidx(i)] = s->res[pidx(from)];
	return 0;
}

/* bpf_loop callback: one byte of the resource through the glob automaton s->gpat. */
static long glob_step(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	if (!s || i >= s->res_len)
		return 1;
	__u32 idx = s->slot * RT_MAX_PATTERNS + s->gpat;
	struct rt_pattern *pat = bpf_map_lookup_elem(&rt_patterns, &idx);
	if (!pat)
		return 1;
	__u8 b = s->res[pidx(i)];
	__u64 st = s->gstate;
	__u64 next = ((st & pat->accept[b]) << 1) | (st & pat->dstar);
	if (b != '/')
		next |= st & pat->star;
	__u64 stars = pat->star | pat->dstar;
	next |= (next & stars) << 1;
	next |= (next & stars) << 1;
	s->gstate = next;
	return next == 0;
}

static __always_inline int glob_match(struct scratch *s, __u32 r)
{
	__u32 idx = s->slot * RT_MAX_RULES + (r & (RT_MAX_RULES - 1));
	struct rt_rule *rule = bpf_map_lookup_elem(&rt_rules, &idx);
	if (!rule || rule->pattern >= RT_MAX_PATTERNS)
		return 0;
	s->gpat = rule->pattern;
	__u32 pidx = s->slot * RT_MAX_PATTERNS + s->gpat;
	struct rt_pattern *pat = bpf_map_lookup_elem(&rt_patterns, &pidx);
	if (!pat || pat->tokens > RT_MAX_PATTERN_TOKENS)
		return 0;
	__u64 stars = pat->star | pat->dstar;
	__u64 st = 1;
	st |= (st & stars) << 1;
	st |= (st & stars) << 1;
	s->gstate = st;
	__u32 tokens = pat->tokens;
	bpf_loop(RT_PATH_MAX, glob_step, NULL, 0);
	return (s->gstate >> (tokens & 63)) & 1;
}

/* Decides s->res for class s->cls. Returns the winning rule index or RT_NONE in s->best. */
static __always_inline void find_rule(struct scratch *s, const char *name, int name_is_resource)
{
	__u8 cls = s->cls;
	__builtin_memset(&s->abits, 0, sizeof(s->abits));
	if (s->wl.has_sources && s->actor_len > 0) {
		__builtin_memset(&s->skey, 0, sizeof(s->skey));
		s->skey.slot = s->slot;
		__builtin_memcpy(s->skey.key, s->actor, RT_PATH_MAX);
		struct rt_source_val *v = bpf_map_lookup_elem(&rt_sources, &s->skey);
		if (v && v->path_id >= 0 && v->path_id < RT_SRC_WORDS * 64)
			s->abits[(v->path_id >> 6) & (RT_SRC_WORDS - 1)] |= 1ULL << (v->path_id & 63);
		s->seen_parent = 0;
		bpf_loop(RT_PATH_MAX, walk_actor, NULL, 0);
	}
	__builtin_memset(&s->ikey, 0, sizeof(s->ikey));
	s->ikey.slot = s->slot;
	s->ikey.cls = cls;
	s->best = RT_NONE;
	s->ncand = 0;
	if (cls == RT_CLASS_PROCESS || cls == RT_CLASS_FILE) {
		if (s->res_len == 0)
			return;
		__builtin_memcpy(s->ikey.key, s->res, RT_PATH_MAX);
		eval_list(s, RT_NODE_PATH, 0);
		/* L(EXECNAME, basename): probed for Process and File alike (docs/rule-table.md), when the
		 * table has such nodes at all. */
		if (s->wl.features & RT_FEATURE_EXECNAME) {
			__builtin_memset(s->ikey.key, 0, RT_PATH_MAX);
			s->last_slash = 0;
			bpf_loop(RT_PATH_MAX, find_last_slash, NULL, 0);
			bpf_loop(RT_PATH_MAX, copy_basename, NULL, 0);
			eval_list(s, RT_NODE_EXECNAME, 0);
			__builtin_memcpy(s->ikey.key, s->res, RT_PATH_MAX);
		}
		s->seen_parent = 0;
		bpf_loop(RT_PATH_MAX, walk_resource, NULL, 0);
		for (int k = 0; k < RT_MAX_PATTERN_CANDIDATES; k++) {
			if (k >= s->ncand)
				break;
			__u32 r = s->cand[k];
			if (r < s->best && glob_match(s, r))
				s->best = r;
		}
		return;
	}
	/* Network and Capabilities: the name is in s->res. */
	__builtin_memcpy(s->ikey.key, s->res, RT_PATH_MAX);
	if (cls == RT_CLASS_NETWORK) {
		eval_list(s, RT_NODE_PROTOCOL, 0);
		/* Every name of the socket: the lowest rule index of their lists is the oracle's precedence. */
		if (s->icmp_too) {
			__builtin_memset(s->ikey.key, 0, RT_PATH_MAX);
			s->ikey.key[0] = 'i';
			s->ikey.key[1] = 'c';
			s->ikey.key[2] = 'm';
			s->ikey.key[3] = 'p';
			eval_list(s, RT_NODE_PROTOCOL, 0);
		}
		__builtin_memset(s->ikey.key, 0, RT_PATH_MAX);
		s->ikey.key[0] = 'a';
		s->ikey.key[1] = 'l';
		s->ikey.key[2] = 'l';
		eval_list(s, RT_NODE_PROTOCOL, 0);
	} else {
		eval_list(s, RT_NODE_CAPABILITY, 0);
	}
}

/* ---- context of the acting task ----------------------------------------------------------- */

static __always_inline __u32 strlen_path(const char *p)
{
	__u32 n = 0;
	for (int i = 0; i < RT_PATH_MAX; i++) {
		if (p[i] == 0)
			break;
		n++;
	}
	return n;
}

/* Fills dst (RT_PATH_MAX bytes) with the path of f, zero padded (map keys need it; bpf_d_path
 * leaves its working copy in the tail of its buffer, so it writes to s->tmp and only the path is
 * copied); returns its length, 0 if unknown or too long. */
static __always_inline __u32 file_path(struct scratch *s, struct file *f, char *dst)
{
	__builtin_memset(dst, 0, RT_PATH_MAX);
	if (!f)
		return 0;
	long n = bpf_d_path((struct path *)&f->f_path, s->tmp, RT_PATH_MAX);
	if (n <= 1 || n > RT_PATH_MAX)
		return 0;
	__u32 len = (__u32)n - 1;
	asm volatile("%[v] &= 255" : [v] "+r"(len));
	bpf_probe_read_kernel(dst, len, s->tmp);
	return len;
}

/* The executable of task t into dst: from the cache, else through bpf_d_path where the hook allows
 * it (and then remembered). Returns its length, 0 when unknown. */
static __always_inline __u32 exe_path(struct scratch *s, struct task_struct *t, char *dst, int may_d_path)
{
	struct file *exe = BPF_CORE_READ(t, mm, exe_file);
	if (!exe) {
		__builtin_memset(dst, 0, RT_PATH_MAX);
		return 0;
	}
	struct rt_exe_key key = {
		.file = (__u64)exe,
		.ino = BPF_CORE_READ(exe, f_inode, i_ino),
		.dentry = (__u64)BPF_CORE_READ(exe, f_path.dentry),
	};
	struct rt_path *cached = bpf_map_lookup_elem(&rt_exe_cache, &key);
	if (cached) {
		__builtin_memcpy(dst, cached->p, RT_PATH_MAX);
		return cached->len & (RT_PATH_MAX - 1);
	}
	if (!may_d_path) {
		__builtin_memset(dst, 0, RT_PATH_MAX);
		return 0;
	}
	__u32 n = file_path(s, t->mm->exe_file, dst);
	if (n > 0) {
		__builtin_memcpy(s->cache_value.p, dst, RT_PATH_MAX);
		s->cache_value.len = n;
		s->cache_value.pad = 0;
		bpf_map_update_elem(&rt_exe_cache, &key, &s->cache_value, BPF_ANY);
	}
	return n;
}

static __always_inline __u32 ns_tgid(struct task_struct *t)
{
	struct pid *pid = BPF_CORE_READ(t, group_leader, thread_pid);
	if (!pid)
		return 0;
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;
	bpf_probe_read_kernel(&nr, sizeof(nr), &pid->numbers[level & 31].nr);
	return nr;
}

/* The current task's workload in the slot in force (by cgroup, then by mount namespace), or NULL. */
static __always_inline struct rt_workload *find_workload(struct rt_config *cfg, struct task_struct *t)
{
	__u32 slot = cfg->active & 1;
	struct rt_workload_key k = { .slot = slot, .kind = RT_WKEY_CGROUP, .id = bpf_get_current_cgroup_id() };
	struct rt_workload *w = bpf_map_lookup_elem(&rt_workloads, &k);
	if (!w) {
		k.kind = RT_WKEY_MNTNS;
		/* Direct loads through the task's BTF pointers (faults read as 0), not three helper calls. */
		struct nsproxy *nsp = t->nsproxy;
		struct mnt_namespace *mnt_ns = nsp ? nsp->mnt_ns : NULL;
		k.id = mnt_ns ? mnt_ns->ns.inum : 0;
		if (!k.id)
			return NULL;
		w = bpf_map_lookup_elem(&rt_workloads, &k);
	}
	return w;
}

/* Copies the workload into the scratch and counts the decision. */
static __always_inline struct scratch *begin_with(struct rt_config *cfg, struct rt_workload *w, struct task_struct *t, __u8 cls)
{
	struct scratch *s = get_scratch();
	if (!s)
		return NULL;
	__u32 slot = cfg->active & 1;
	__builtin_memcpy(&s->wl, w, sizeof(s->wl));
	s->slot = slot;
	s->generation = slot ? cfg->generation[1] : cfg->generation[0];
	s->cls = cls;
	s->write = 0;
	s->owner = 0;
	s->silent = 0;
	s->icmp_too = 0;
	s->tty = BPF_CORE_READ(t, signal, tty) != NULL;
	count(0);
	return s;
}

/* Looks the current task's workload up (by cgroup, then by mount namespace) into the scratch. */
static __always_inline struct scratch *begin(__u8 cls)
{
	struct rt_config *cfg = bpf_map_lookup_elem(&rt_config, &zero);
	if (!cfg || !cfg->enabled)
		return NULL;
	struct task_struct *t = bpf_get_current_task_btf();
	struct rt_workload *w = find_workload(cfg, t);
	if (!w)
		return NULL;
	return begin_with(cfg, w, t, cls);
}

/* Applies the winner (or the posture) and reports. Returns 0 or -EACCES. */
static __always_inline int conclude(struct scratch *s, __u32 flags, __u32 arg2, __u32 arg3, int may_d_path, int report)
{
	__u8 cls = s->cls & 3;
	__u8 action;
	__s32 rule = -1;
	__u8 kind;
	if (s->best != RT_NONE) {
		__u32 idx = s->slot * RT_MAX_RULES + (s->best & (RT_MAX_RULES - 1));
		struct rt_rule *r = bpf_map_lookup_elem(&rt_rules, &idx);
		if (!r)
			return 0;
		action = r->action;
		if (action == RT_ACTION_ALLOW) {
			s->silent = 1;
			return 0;
		}
		rule = s->best;
		kind = action == RT_ACTION_BLOCK ? RT_EVENT_BLOCK : RT_EVENT_AUDIT;
	} else {
		int lp = (s->wl.lp_unscoped >> cls) & 1;
		if (!lp) {
			__u64 any = 0;
			for (int k = 0; k < RT_SRC_WORDS; k++)
				any |= s->wl.lp_sources[cls][k] & s->abits[k];
			lp = any != 0;
		}
		if (!lp) {
			s->silent = 1;
			return 0;
		}
		action = s->wl.posture[cls] ? RT_ACTION_BLOCK : RT_ACTION_AUDIT;
		kind = RT_EVENT_POSTURE;
	}
	int ret = action == RT_ACTION_BLOCK ? -EACCES : 0;
	if (!report)
		return ret;
	struct rt_event *e = bpf_ringbuf_reserve(&rt_events, sizeof(*e), 0);
	if (!e) {
		count(2);
		return ret;
	}
	struct task_struct *t = bpf_get_current_task_btf();
	e->time_ns = bpf_ktime_get_boot_ns();
	e->wid = s->wl.wid;
	e->generation = s->generation;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = BPF_CORE_READ(t, real_parent, tgid);
	e->ns_pid = ns_tgid(t);
	e->ns_ppid = ns_tgid(BPF_CORE_READ(t, real_parent));
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->rule = rule;
	e->cls = cls;
	e->kind = kind;
	e->action = action;
	e->write = s->write;
	e->err = ret ? EACCES : 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	e->syscall = regs ? (__u32)BPF_CORE_READ(regs, orig_ax) : RT_NONE;
	e->flags = flags;
	e->arg2 = arg2;
	e->arg3 = arg3;
	e->arg0 = regs ? (__u32)BPF_CORE_READ(regs, di) : 0;
	__builtin_memcpy(e->resource, s->res, RT_PATH_MAX);
	__builtin_memcpy(e->exe, s->actor, RT_PATH_MAX);
	exe_path(s, t->real_parent, s->parent, may_d_path);
	__builtin_memcpy(e->parent_exe, s->parent, RT_PATH_MAX);
	bpf_ringbuf_submit(e, 0);
	count(1);
	return ret;
}

/* ---- hooks -------------------------------------------------------------------------------- */

/* A kernel address as a plain number: its distance from `base`, a fixed address (the rt_config value).
 * The verifier refuses xor and multiply on pointers, which the slot's index and the key compare need, and
 * allows (to a privileged loader) the difference of two pointers, which is a scalar. One-to-one, so two
 * keys are equal exactly when the addresses are. */
static __always_inline __u64 kaddr(const void *p, const void *base)
{
	return (__u64)p - (__u64)base;
}

/* The decision cache key of an open (rtctl-maps.h struct rt_dkey); 0 when the open is not cacheable:
 * an unlinked name, or a non-directory with several names (a hard link elsewhere may be decided
 * otherwise, and the name's dentry could later be reused for it). Addresses are stored as kaddr(.., base). */
static __always_inline int dcache_key(struct rt_dkey *k, struct file *file, struct task_struct *t,
				      __u32 wid, __u8 has_sources, __u8 exec, const void *base)
{
	/* Straight through, no early return (a load through a NULL BTF pointer reads 0, and the conditions
	 * are gathered in ok): the compiler keeps the key's fields in registers, and each early exit would
	 * cost a rebuild of all of them as zeros on the way out. */
	struct dentry *d = file->f_path.dentry;
	struct inode *inode = file->f_inode;
	struct fs_struct *fs = t->fs;
	int ok = d && inode && fs && d->d_hash.pprev &&
		 ((inode->i_mode & 0170000) == 0040000 || inode->i_nlink == 1);
	k->dentry = kaddr(d, base);
	k->parent = kaddr(d->d_parent, base);
	/* hash and len apart: the 6.1 verifier resolves the union's 64-bit hash_len to the 32-bit hash. */
	k->name = (__u64)d->d_name.hash | (__u64)d->d_name.len << 32;
	k->mnt = kaddr(file->f_path.mnt, base);
	k->inode = kaddr(inode, base);
	k->ino = inode->i_ino;
	k->igen = inode->i_generation;
	/* Direct loads through the task's BTF pointers (no helper calls on this path). */
	k->root_mnt = kaddr(fs->root.mnt, base);
	k->root_dentry = kaddr(fs->root.dentry, base);
	if (has_sources) {
		struct file *exe = t->mm->exe_file;
		k->exe = exe ? kaddr(exe, base) : 0;
		k->exe_ino = exe->f_inode->i_ino;
		k->exe_dentry = exe ? kaddr(exe->f_path.dentry, base) : 0;
	}
	k->wid = wid;
	k->write = !exec && (file->f_mode & FMODE_WRITE) != 0;
	k->exec = exec;
	/* The task's real uid, as bpf_get_current_uid_gid() gives it to the uncached decision (current->cred). */
	k->owner = inode->i_uid.val == t->cred->uid.val;
	k->tty = t->signal->tty != NULL;
	return ok;
}

/* The first part of the decision cache's stamp, read before the state (the slot in force and the
 * workload): an answer computed from an older state carries an older epoch. Returns 0 when the cache
 * cannot be used (no kernel symbols); the epoch is read either way (task_workload uses it). */
static __always_inline int dcache_epoch(struct rt_dstamp *st)
{
	__u64 *ep = bpf_map_lookup_elem(&rt_epoch, &zero);
	st->epoch = ep ? *ep : 0;
	asm volatile("" ::: "memory");
	return ep && &rename_lock && &mount_lock;
}

/* The rest of the stamp: the rename and mount sequence counts, read before any path (they guard paths,
 * not the state, so they are read only for a task of a workload); 0 when a change is in progress. */
static __always_inline int dcache_seqs(struct rt_dstamp *st)
{
	st->rename_seq = 1;
	st->mount_seq = 1;
	bpf_probe_read_kernel(&st->rename_seq, sizeof(st->rename_seq), &rename_lock);
	bpf_probe_read_kernel(&st->mount_seq, sizeof(st->mount_seq), &mount_lock);
	/* As read_seqbegin: the path is read after the counts. */
	asm volatile("" ::: "memory");
	return !(st->rename_seq & 1) && !(st->mount_seq & 1);
}

/* The current task's workload: 1 with its id and has_sources in *wid and *has_sources, 0 when the task is in
 * none. From the task's own storage while what it was found from is unchanged, else by find_workload (then
 * remembered). find_workload's answer is a function of the state in force, the task's cgroup id and its
 * mount namespace's inode number, and nothing else; the storage keeps all three (the state as the epoch, read
 * before the slot as for the decision cache: the loader moves the epoch on after each flip, so a remembered
 * answer of an older state never carries the current epoch once `apply` has replied). A task that moves to
 * another cgroup or mount namespace (setns, unshare, cgroup.procs) is looked up again at its next hook. Only
 * the task itself runs these hooks on its storage, so its fields are never written by two CPUs at once.
 * *w is the workload when it was looked up here (NULL when the answer came from the storage). Without
 * `create`, a task that has no storage yet is looked up and not remembered. */
static __always_inline int task_workload(struct rt_config *cfg, struct task_struct *t, __u64 epoch,
					 struct rt_workload **w, __u32 *wid, __u8 *has_sources, int create)
{
	/* What bpf_get_current_cgroup_id() returns (the task's cgroup on the default hierarchy, its kernfs id),
	 * by direct loads instead of a helper call; a load that faults reads 0, which no storage holds. */
	__u64 cgroup = t->cgroups->dfl_cgrp->kn->id;
	struct nsproxy *nsp = t->nsproxy;
	struct mnt_namespace *mnt_ns = nsp ? nsp->mnt_ns : NULL;
	__u32 mntns = mnt_ns ? mnt_ns->ns.inum : 0;
	*w = NULL;
	struct rt_task_wl *tw =
		bpf_task_storage_get(&rt_task_wl, t, NULL, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (tw && tw->found && cgroup && tw->epoch == epoch && tw->cgroup == cgroup && tw->mntns == mntns) {
		*wid = tw->wid;
		*has_sources = tw->has_sources;
		return tw->found == 2;
	}
	struct rt_workload *found = find_workload(cfg, t);
	*w = found;
	*wid = found ? found->wid : 0;
	*has_sources = found ? found->has_sources : 0;
	if (tw) {
		tw->epoch = epoch;
		tw->cgroup = cgroup;
		tw->mntns = mntns;
		tw->wid = *wid;
		tw->has_sources = *has_sources;
		tw->found = found ? 2 : 1;
	}
	return found != NULL;
}

/* The slot of key k: a multiply-shift of the dentry, the actor, the workload and the mode bits, narrowed to
 * rt_config.cache_slots when a test sets it. */
static __always_inline __u32 dcache_index(struct rt_config *cfg, struct rt_dkey *k)
{
	__u64 h = k->dentry ^ k->exe ^ ((__u64)k->wid << 40) ^ ((__u64)(k->write | k->exec << 1 | k->owner << 2) << 58);
	__u32 i = (__u32)((h * 0x9e3779b97f4a7c15ULL) >> RT_DCACHE_SHIFT);
	__u32 n = cfg->cache_slots;
	if (n)
		i &= n - 1;
	return i;
}

/* 1 when slot sl holds key k with stamp st. The slot's sequence word is read before and after the key and
 * the stamp; only the same even value both times counts (a writer holds it odd while it writes, and leaves
 * it 2 higher), so a slot read while it was being rewritten is never taken for a key it does not hold.
 *
 * Ordering: each sequence read is an atomic fetch-and-add of 0 (BPF_ATOMIC | BPF_FETCH), which is fully
 * ordered: on x86-64 the JIT emits `lock xadd` (a full barrier; x86 does not reorder loads with older loads
 * anyway), on arm64 an LSE `ldaddal` (acquire and release) or an exclusive-load/store loop followed by
 * `dmb ish`. So the key's loads cannot move before the first read nor after the second on either
 * architecture; the empty asm statements keep the compiler from moving them. */
static __always_inline int dcache_match(struct rt_dslot *sl, struct rt_dkey *k, struct rt_dstamp *st)
{
	__u64 s1 = __sync_fetch_and_add(&sl->seq, 0);
	asm volatile("" ::: "memory");
	__u64 *a = (__u64 *)&sl->key, *b = (__u64 *)k;
	__u64 diff = 0;
#pragma unroll
	for (int i = 0; i < (int)(sizeof(*k) / 8); i++)
		diff |= a[i] ^ b[i];
	__u64 *sa = (__u64 *)&sl->stamp, *sb = (__u64 *)st;
	diff |= (sa[0] ^ sb[0]) | (sa[1] ^ sb[1]);
	asm volatile("" ::: "memory");
	__u64 s2 = __sync_fetch_and_add(&sl->seq, 0);
	return !diff && s1 == s2 && !(s1 & 1);
}

/* Stores key k with stamp st in its slot, over whatever the slot held. The writer claims the slot by a
 * compare-and-exchange of its sequence word from the even value it read to that value + 1 (fully ordered,
 * BPF_CMPXCHG); when another writer holds it (odd) or takes it first, nothing is stored (a cache may forget).
 * Then the key and the stamp, then a fetch-and-add of 1 (fully ordered: the stores before it are visible
 * before the even value is), so the word is 2 higher than before: no reader that read the old value takes
 * the new contents, nor a slot half written. The word is 64 bits and never wraps. */
static __always_inline void dcache_store(struct rt_config *cfg, struct rt_dkey *k, struct rt_dstamp *st)
{
	__u32 idx = dcache_index(cfg, k);
	struct rt_dslot *sl = bpf_map_lookup_elem(&rt_dcache, &idx);
	if (!sl)
		return;
	__u64 s = __sync_fetch_and_add(&sl->seq, 0);
	if (s & 1)
		return;
	if (__sync_val_compare_and_swap(&sl->seq, s, s + 1) != s)
		return;
	asm volatile("" ::: "memory");
	__builtin_memcpy(&sl->key, k, sizeof(*k));
	__builtin_memcpy(&sl->stamp, st, sizeof(*st));
	asm volatile("" ::: "memory");
	__u64 was = __sync_fetch_and_add(&sl->seq, 1);
	/* The old value is used, so the compiler emits the fetching (ordered) form of the add. */
	asm volatile("" ::"r"(was));
}

/* Builds the key of `file` (opened, or executed when `exec`) and looks it up. Returns 1 when a current
 * answer is cached (counted as a decision and a hit); sets *cacheable when the answer may be stored. */
static __always_inline int dcache_answer(struct rt_dkey *key, struct rt_dstamp *now, int *cacheable, int stamped,
					 struct rt_config *cfg, struct file *file, struct task_struct *t,
					 __u32 wid, __u8 has_sources, __u8 exec)
{
	/* Both evaluated (no short cut), so that the key is built on one path only. */
	int seqs = dcache_seqs(now);
	int keyed = dcache_key(key, file, t, wid, has_sources, exec, cfg);
	*cacheable = stamped & (!cfg->cache_off) & seqs & keyed;
	if (!*cacheable)
		return 0;
	__u32 idx = dcache_index(cfg, key);
	struct rt_dslot *sl = bpf_map_lookup_elem(&rt_dcache, &idx);
	if (sl && dcache_match(sl, key, now)) {
		count(3);
		return 1;
	}
	return 0;
}

/* Decides an exec (`exec`, class Process) or an open (class File) of `file`: from the decision cache when a
 * silent allow of the same file, actor and mode is still valid, else from the rules (then cached when silent).
 * The acting executable is the task's running one: for an exec, the one running before it (the parent's in
 * alert terms); for an open, the current program. An exec never writes, and carries no open flags. */
static __always_inline int decide_file(struct file *file, __u8 cls, int exec)
{
	struct rt_dstamp now;
	int stamped = dcache_epoch(&now);
	struct rt_config *cfg = bpf_map_lookup_elem(&rt_config, &zero);
	if (!cfg || !cfg->enabled)
		return 0;
	struct task_struct *t = bpf_get_current_task_btf();
	/* An exec does not create the storage: most execs are the first hook of a task just forked, which
	 * would pay the allocation for one decision; its opens create it. */
	struct rt_workload *w;
	__u32 wid = 0;
	__u8 has_sources = 0;
	if (!task_workload(cfg, t, now.epoch, &w, &wid, &has_sources, !exec))
		return 0;
	/* Zeroed here, not in dcache_key: a field left unset would reach the verifier as a spill of an unset
	 * register (the compiler keeps the key's fields in registers). */
	struct rt_dkey key = {};
	int cacheable = 0;
	/* Without the kernel symbols (stamped 0) the counts read as odd and nothing is cached; the key is built
	 * either way, so that it is built on one path only. */
	if (dcache_answer(&key, &now, &cacheable, stamped, cfg, file, t, wid, has_sources, exec))
		return 0;
	if (!w)
		w = find_workload(cfg, t);
	if (!w)
		return 0;
	struct scratch *s = begin_with(cfg, w, t, cls);
	if (!s)
		return 0;
	s->actor_len = exe_path(s, t, s->actor, 1);
	s->res_len = file_path(s, file, s->res);
	s->write = !exec && (file->f_mode & FMODE_WRITE) != 0;
	s->owner = file->f_inode->i_uid.val == (__u32)bpf_get_current_uid_gid();
	find_rule(s, s->res, 1);
	int verdict = conclude(s, exec ? 0 : file->f_flags, 0, 0, 1, 1);
	if (cacheable && s->silent)
		dcache_store(cfg, &key, &now);
	return verdict;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(rt_bprm_check, struct linux_binprm *bprm, int ret)
{
	if (ret)
		return ret;
	return decide_file(bprm->file, RT_CLASS_PROCESS, 1);
}

SEC("lsm/file_open")
int BPF_PROG(rt_file_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	/* The open of an exec is decided as the exec, in bprm_check_security. */
	if (file->f_flags & RT_FMODE_EXEC)
		return 0;
	return decide_file(file, RT_CLASS_FILE, 0);
}

/* The first name of a socket, as the rules write it (docs/semantics.md "Socket names"); 0 when network rules
 * do not apply. A raw ICMP socket is raw here and icmp too (is_raw_icmp, s->icmp_too). */
static __always_inline int protocol_name(char *dst, int family, int type, int protocol)
{
	__builtin_memset(dst, 0, RT_PATH_MAX);
	if (family == AF_PACKET) {
		dst[0] = 'r'; dst[1] = 'a'; dst[2] = 'w';
		return 3;
	}
	if (family != AF_INET && family != AF_INET6)
		return 0;
	type &= 0xf;
	if (type == SOCK_RAW) {
		dst[0] = 'r'; dst[1] = 'a'; dst[2] = 'w';
		return 3;
	}
	if (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6) {
		dst[0] = 'i'; dst[1] = 'c'; dst[2] = 'm'; dst[3] = 'p';
		return 4;
	}
	if (type == SOCK_STREAM) {
		dst[0] = 't'; dst[1] = 'c'; dst[2] = 'p';
		return 3;
	}
	if (type == SOCK_DGRAM) {
		dst[0] = 'u'; dst[1] = 'd'; dst[2] = 'p';
		return 3;
	}
	return 0;
}

/* An inet raw socket of ICMP or ICMPv6: its second name is icmp. */
static __always_inline __u8 is_raw_icmp(int family, int type, int protocol)
{
	return (family == AF_INET || family == AF_INET6) && (type & 0xf) == SOCK_RAW &&
	       (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6);
}

static __always_inline int decide_socket(int family, int type, int protocol)
{
	struct scratch *s = begin(RT_CLASS_NETWORK);
	if (!s)
		return 0;
	s->res_len = protocol_name(s->res, family, type, protocol);
	if (!s->res_len)
		return 0;
	s->icmp_too = is_raw_icmp(family, type, protocol);
	struct task_struct *t = bpf_get_current_task_btf();
	s->actor_len = exe_path(s, t, s->actor, 1);
	find_rule(s, s->res, 0);
	return conclude(s, family, type, protocol, 1, 1);
}

SEC("lsm/socket_create")
int BPF_PROG(rt_socket_create, int family, int type, int protocol, int kern, int ret)
{
	if (ret || kern)
		return ret;
	return decide_socket(family, type, protocol);
}

/* ---- address rules (network.matchAddresses; rtctl-addr-maps.h, docs/bpf-lsm.md "Address rules") ---- */

#define MSG_FASTOPEN 0x20000000

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RT_MAX_ADDR_BLOCKS * 2);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rt_addr_key);
	__type(value, struct rt_addr_val);
} rt_addr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RT_MAX_WORKLOADS * 2);
	__type(key, __u32);
	__type(value, struct rt_addr_wl);
} rt_addr_wl SEC(".maps");

/* Per-CPU working memory of one address decision: the destination and the list of its longest block. */
struct addr_scratch {
	struct rt_addr_key key;
	struct rt_addr_val val;
	__u16 port;
	__u8 name; /* RT_NET_* of the socket */
	__u8 pad;
	__u32 pad2;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct addr_scratch);
} rt_addr_scratch SEC(".maps");

/* Reads an AF_INET or AF_INET6 destination into a->key (an IPv4-mapped IPv6 address as its IPv4 address)
 * and a->port; returns 0 when the address is of another family or too short (no address rule applies). */
static __always_inline int read_destination(struct addr_scratch *a, void *address, int len, __u8 name)
{
	__u16 fam = 0;
	if (!address || bpf_probe_read_kernel(&fam, sizeof(fam), address))
		return 0;
	__builtin_memset(&a->key, 0, sizeof(a->key));
	a->key.prefixlen = RT_ADDR_KEY_BITS + 128;
	__u16 port = 0;
	if (fam == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin = {};
		if (bpf_probe_read_kernel(&sin, sizeof(sin), address))
			return 0;
		a->key.family = 4;
		__builtin_memcpy(a->key.addr, &sin.sin_addr.s_addr, 4);
		port = sin.sin_port;
	} else if (fam == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6 = {};
		if (bpf_probe_read_kernel(&sin6, sizeof(sin6), address))
			return 0;
		__u32 w[4];
		__builtin_memcpy(w, &sin6.sin6_addr, 16);
		if (w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff)) {
			a->key.family = 4;
			__builtin_memcpy(a->key.addr, &w[3], 4);
		} else {
			a->key.family = 6;
			__builtin_memcpy(a->key.addr, w, 16);
		}
		port = sin6.sin6_port;
	} else {
		return 0;
	}
	/* Ports belong to tcp and udp; icmp and raw sockets have none (0, as the oracle is asked). */
	a->port = name == RT_NET_TCP || name == RT_NET_UDP ? bpf_ntohs(port) : 0;
	a->name = name;
	return 1;
}

/* bpf_loop callback: address rule i of the destination's list; stops at the first that decides. */
static long walk_address(__u32 i, void *ctx)
{
	struct scratch *s = get_scratch();
	struct addr_scratch *a = bpf_map_lookup_elem(&rt_addr_scratch, &zero);
	if (!s || !a)
		return 1;
	if (i >= a->val.count || i >= RT_MAX_ADDR_REFS)
		return 1;
	__u32 at = i;
	asm volatile("%[v] &= 63" : [v] "+r"(at)); /* RT_MAX_ADDR_REFS - 1, kept for the verifier */
	struct rt_addr_ref *ref = &a->val.refs[at];
	__u32 r = ref->rule;
	if (r >= s->best)
		return 1; /* ascending: no later rule beats the best one */
	/* The rule's protocol is one of the socket's names. */
	if (ref->proto && ref->proto != a->name &&
	    !(a->name == RT_NET_RAW_ICMP && (ref->proto == RT_NET_RAW || ref->proto == RT_NET_ICMP)))
		return 0;
	if (ref->nports) {
		int hit = 0;
		for (int k = 0; k < RT_MAX_ADDR_PORTS; k++)
			if (k < ref->nports && ref->ports[k] == a->port)
				hit = 1;
		if (!hit)
			return 0;
	}
	eval_rule(s, r, RT_NODE_ADDRESS, 0);
	return s->best == r;
}

/* A hex digit, computed (a constant digit table would share .rodata offsets the kernel's BTF check refuses). */
static __always_inline char hexdigit(__u32 v)
{
	v &= 15;
	return v < 10 ? '0' + v : 'a' + (v - 10);
}

/* The event resource of a connect or send (RT_ADDR_RESOURCE_LEN in rtctl-addr-maps.h). */
static __always_inline void put_destination(struct scratch *s, struct addr_scratch *a)
{
	char name[4] = { s->res[0], s->res[1], s->res[2], s->res[3] };
	__builtin_memset(s->res, 0, 48);
	s->res[0] = '@';
	s->res[1] = a->key.family == 6 ? '6' : '4';
	for (int i = 0; i < 16; i++) {
		s->res[2 + 2 * i] = hexdigit(a->key.addr[i] >> 4);
		s->res[3 + 2 * i] = hexdigit(a->key.addr[i]);
	}
	for (int i = 0; i < 4; i++)
		s->res[34 + i] = hexdigit(a->port >> (12 - 4 * i));
	for (int i = 0; i < 4; i++)
		s->res[RT_ADDR_RESOURCE_LEN + i] = name[i];
	s->res_len = strlen_path(s->res);
}

static __always_inline __u8 net_code(const char *name, __u8 icmp_too)
{
	if (icmp_too)
		return RT_NET_RAW_ICMP;
	switch (name[0]) {
	case 't':
		return RT_NET_TCP;
	case 'u':
		return RT_NET_UDP;
	case 'i':
		return RT_NET_ICMP;
	default:
		return RT_NET_RAW;
	}
}

/* A connect or send to `address`: address rules first (all more specific than protocol rules), then the
 * protocol rules; Allow address rules put connects and sends (never socket creation) in least-permissive
 * mode. Without an inet address it is decided by protocol as before. */
static __always_inline int decide_destination(int family, int type, int protocol, void *address, int len)
{
	struct scratch *s = begin(RT_CLASS_NETWORK);
	if (!s)
		return 0;
	s->res_len = protocol_name(s->res, family, type, protocol);
	if (!s->res_len)
		return 0;
	s->icmp_too = is_raw_icmp(family, type, protocol);
	struct addr_scratch *a = bpf_map_lookup_elem(&rt_addr_scratch, &zero);
	int have = a && read_destination(a, address, len, net_code(s->res, s->icmp_too));
	struct task_struct *t = bpf_get_current_task_btf();
	s->actor_len = exe_path(s, t, s->actor, 1);
	find_rule(s, s->res, 0);
	if (have && a) {
		a->key.slot = s->slot;
		struct rt_addr_val *v = bpf_map_lookup_elem(&rt_addr, &a->key);
		if (v && !bpf_probe_read_kernel(&a->val, sizeof(a->val), v))
			bpf_loop(RT_MAX_ADDR_REFS, walk_address, NULL, 0);
		if (s->best == RT_NONE && !((s->wl.lp_unscoped >> RT_CLASS_NETWORK) & 1)) {
			/* Least-permissive through Allow address rules: conclude() reads the class bit of this
			 * decision's copy of the workload. */
			int lp = (s->wl.lp_unscoped & RT_ALLOW_ADDRESS_BIT) != 0;
			__u32 idx = s->slot * RT_MAX_WORKLOADS + (s->wl.wid & (RT_MAX_WORKLOADS - 1));
			struct rt_addr_wl *aw = bpf_map_lookup_elem(&rt_addr_wl, &idx);
			if (!lp && aw) {
				__u64 any = 0;
				for (int k = 0; k < RT_SRC_WORDS; k++)
					any |= aw->lp_sources[k] & s->abits[k];
				lp = any != 0;
			}
			if (lp)
				s->wl.lp_unscoped |= 1 << RT_CLASS_NETWORK;
		}
		put_destination(s, a);
	}
	return conclude(s, family, type, protocol, 1, 1);
}

SEC("lsm/socket_connect")
int BPF_PROG(rt_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	if (ret)
		return ret;
	struct sock *sk = sock->sk;
	if (!sk)
		return 0;
	return decide_destination(sk->__sk_common.skc_family, sock->type, sk->sk_protocol, address, addrlen);
}

/* Sends that name a destination: datagram, ping and raw sockets, and a TCP Fast Open connect (a stream
 * socket ignores the address otherwise; its destination was decided at connect). Every other send leaves
 * after one load. */
SEC("lsm/socket_sendmsg")
int BPF_PROG(rt_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	if (ret)
		return ret;
	void *name = msg->msg_name;
	if (!name)
		return 0;
	struct sock *sk = sock->sk;
	if (!sk)
		return 0;
	int family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if ((sock->type & 0xf) == SOCK_STREAM && !(msg->msg_flags & MSG_FASTOPEN))
		return 0;
	return decide_destination(family, sock->type, sk->sk_protocol, name, msg->msg_namelen);
}

/* Capability names without the cap_ prefix, by number (include/uapi/linux/capability.h). */
static const char cap_names[41][20] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid", "setuid",
	"setpcap", "linux_immutable", "net_bind_service", "net_broadcast", "net_admin", "net_raw",
	"ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot", "sys_ptrace", "sys_pacct",
	"sys_admin", "sys_boot", "sys_nice", "sys_resource", "sys_time", "sys_tty_config", "mknod",
	"lease", "audit_write", "audit_control", "setfcap", "mac_override", "mac_admin", "syslog",
	"wake_alarm", "block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
};

SEC("lsm/capable")
int BPF_PROG(rt_capable, const struct cred *cred, struct user_namespace *ns, int cap, unsigned int opts, int ret)
{
	if (ret)
		return ret;
	__u32 c = (__u32)cap;
	asm volatile("%[v] &= 63" : [v] "+r"(c));
	if (c > 40 || cap != (int)c)
		return 0;
	struct scratch *s = begin(RT_CLASS_CAPABILITIES);
	if (!s)
		return 0;
	__builtin_memset(s->res, 0, RT_PATH_MAX);
	bpf_probe_read_kernel_str(s->res, 20, cap_names[c]);
	s->res_len = strlen_path(s->res);
	struct task_struct *t = bpf_get_current_task_btf();
	s->actor_len = exe_path(s, t, s->actor, 0);
	find_rule(s, s->res, 0);
	return conclude(s, cap, 0, 0, 0, !(opts & CAP_OPT_NOAUDIT));
}

