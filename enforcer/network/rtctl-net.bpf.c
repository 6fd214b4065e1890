// SPDX-License-Identifier: GPL-2.0
/* The cgroup network data plane: cgroup/sock_create decides the creation of sockets by protocol
 * (matchProtocols), cgroup/connect4/6 and cgroup/sendmsg4/6 decide connects and sends by destination
 * (matchAddresses, then matchProtocols). Attached with BPF_F_ALLOW_OVERRIDE to each workload's cgroup and to
 * the host cgroup, so a process runs the programs of its nearest attached cgroup once; the workload is the
 * deepest registered cgroup the process is in. Same rule table and semantics as the oracle (docs/semantics.md):
 * what depends only on the workload and protocol is decided by the control plane in advance (rtn_proto),
 * address rules are looked up per prefix length, longest first. Block returns EPERM to the caller. A process
 * outside the host's pid namespace is never decided by the host workload (current_workload). For workloads
 * whose rules name sources (fromSource) or pts, the verdicts also depend on the process's class
 * (process_class: which sources its executable matches, whether it has a terminal; docs/network.md). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "rtctl-net-maps.h"
#include "../bpf-common/rtctl-walk.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2
#define AF_INET6 10
#define AF_PACKET 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define IPPROTO_ICMP 1
#define IPPROTO_ICMPV6 58

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RTN_MAX_WORKLOADS);
	__type(key, __u64);
	__type(value, struct rtn_workload);
} rtn_workloads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RTN_MAX_WORKLOADS * 16);
	__type(key, struct rtn_proto_key);
	__type(value, struct rtn_verdict);
} rtn_proto SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rtn_addr_key);
	__type(value, struct rtn_addr_value);
} rtn_addr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rtn_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RTN_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} rtn_counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&rtn_counters, &which);
	if (c)
		*c += 1;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rtn_config);
} rtn_config SEC(".maps");

/* Set by the loader before the programs load: 1 where the kernel lets cgroup programs call
 * bpf_get_ns_current_pid_tgid() and bpf_get_current_task_btf() (6.10+), 0 where it does not (the verifier never
 * sees the calls then). */
const volatile __u32 rtn_pidns_check = 0;

/* Whether the current process is a container's: outside the host's pid namespace, in the host's user
 * namespace (rtn_config). A process that made a user namespace of its own (no privilege needed) to make a pid
 * namespace is still a host process. */
static __always_inline int outside_host(struct rtn_config *c)
{
	if (!rtn_pidns_check || !c->pidns_ino)
		return 0;
	struct bpf_pidns_info ns = {};
	if (bpf_get_ns_current_pid_tgid(c->pidns_dev, c->pidns_ino, &ns, sizeof(ns)) == 0)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	const struct cred *cred = task->cred;
	if (!cred)
		return 0;
	struct user_namespace *user = cred->user_ns;
	return user && user->ns.inum == c->userns_ino;
}

/* The workload of the current process: the deepest registered cgroup among its ancestors. The host workload
 * (registered at the host cgroup, an ancestor of every container) does not take containers' processes
 * (outside_host): a container the control plane has not registered yet is not decided by host policies. */
static __always_inline struct rtn_workload *current_workload(__u64 *cgroup)
{
	struct rtn_workload *found = 0;
	for (int level = 0; level < RTN_MAX_ANCESTORS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		if (!id)
			break;
		struct rtn_workload *w = bpf_map_lookup_elem(&rtn_workloads, &id);
		if (w) {
			found = w;
			*cgroup = id;
		}
	}
	__u32 zero = 0;
	struct rtn_config *c = found ? bpf_map_lookup_elem(&rtn_config, &zero) : 0;
	if (c && c->host_cgroup == *cgroup && outside_host(c))
		return 0;
	return found;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RTN_MAX_WORKLOADS * 4);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* 272-byte entries: allocated as sources are written */
	__type(key, struct rtn_src_key);
	__type(value, struct rtn_src_value);
} rtn_src SEC(".maps");

/* Where the executable's path is named (backwards, into norm[pos .. RTN_LONG)) and the source key is built. */
struct rtn_scratch {
	char norm[RTN_LONG];
	struct rtn_src_key key;
	__u32 exe_pos; /* the executable named by the last process_class(): norm[exe_pos .. exe_pos + exe_len) */
	__u32 exe_len; /* 0: not named */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rtn_scratch);
} rtn_scratch SEC(".maps");

/* The walk from the executable's dentry up to the process's root (bpf-common/rtctl-walk.h, as the system call
 * plane names objects): one directory level, or one mount crossing, per step; names longer than a source key
 * holds are not named. */

static long walk_step(__u32 i, void *data)
{
	struct walk_ctx *c = data;
	__u32 zero = 0;
	struct rtn_scratch *s = bpf_map_lookup_elem(&rtn_scratch, &zero);
	if (!s) {
		c->bad = 1;
		return 1;
	}
	struct dentry *d, *parent;
	int climbed = walk_climb(c, &d, &parent);
	if (climbed >= 0)
		return climbed;
	__u32 len = BPF_CORE_READ(d, d_name.len);
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	if (len == 0 || len > 255 || c->pos < len + 1) {
		c->bad = 1;
		return 1;
	}
	c->pos -= len;
	if (bpf_probe_read_kernel(&s->norm[mask4095(c->pos)], mask255(len), name) < 0) {
		c->bad = 1;
		return 1;
	}
	c->pos -= 1;
	s->norm[mask4095(c->pos)] = '/';
	c->dentry = (__u64)parent;
	return 0;
}

/* The directories of the executable's path, deepest first: norm[pos + j] == '/' ends one, and the key then holds
 * the path up to j (the bytes after it cleared as the walk goes). */
struct prefix_ctx {
	__u32 pos;
	__u32 n;
	__u32 wid;
	__u32 seen_parent;
	__u32 cls;
};

static long prefix_step(__u32 i, void *data)
{
	struct prefix_ctx *c = data;
	__u32 zero = 0;
	struct rtn_scratch *s = bpf_map_lookup_elem(&rtn_scratch, &zero);
	if (!s || i >= c->n)
		return 1;
	__u32 j = c->n - 1 - i;
	if (s->norm[mask4095(c->pos + j)] != '/')
		goto next;
	if (j < RTN_SRC_MAX - 1) {
		struct rtn_src_value *v = bpf_map_lookup_elem(&rtn_src, &s->key);
		if (v)
			c->cls |= c->seen_parent ? v->ancestor : v->parent;
	}
	c->seen_parent = 1;
next:
	if (j < RTN_SRC_MAX)
		s->key.path[mask255(j)] = 0;
	return 0;
}

/* The class of the current process for workload w: which of its sources match the executable (the path of
 * task->mm->exe_file as the process's root names it: a container's path), and whether it has a terminal. */
static __always_inline __u32 process_class(struct rtn_workload *w)
{
	if (!rtn_pidns_check)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cls = 0;
	if ((w->flags & RTN_WL_PTS) && BPF_CORE_READ(task, signal, tty))
		cls |= RTN_CLS_PTS;
	if (!(w->flags & RTN_WL_SOURCES))
		return cls;
	__u32 zero = 0;
	struct rtn_scratch *s = bpf_map_lookup_elem(&rtn_scratch, &zero);
	if (!s)
		goto unnamed;
	s->exe_len = 0;
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);
	struct fs_struct *fs = task->fs;
	if (!exe || !fs)
		goto unnamed;
	struct walk_ctx c = {
		.dentry = (__u64)BPF_CORE_READ(exe, f_path.dentry),
		.vfsmnt = (__u64)BPF_CORE_READ(exe, f_path.mnt),
		.root_dentry = (__u64)BPF_CORE_READ(fs, root.dentry),
		.root_mnt = (__u64)BPF_CORE_READ(fs, root.mnt),
		.pos = RTN_LONG,
	};
	if (!c.dentry || !c.vfsmnt)
		goto unnamed;
	bpf_loop(RTN_LONG / 2 + 64, walk_step, &c, 0);
	if (c.bad || !c.done || c.pos >= RTN_LONG)
		goto unnamed;
	__u32 n = RTN_LONG - c.pos;
	__builtin_memset(&s->key, 0, sizeof(s->key));
	s->key.wid = w->wid;
	/* At most RTN_SRC_MAX - 1 bytes: key.path keeps its terminating zero (sources are shorter). */
	__u32 copy = n < RTN_SRC_MAX ? n : RTN_SRC_MAX - 1;
	if (bpf_probe_read_kernel(s->key.path, mask255(copy), &s->norm[mask4095(c.pos)]) < 0)
		goto unnamed;
	if (n < RTN_SRC_MAX) {
		struct rtn_src_value *v = bpf_map_lookup_elem(&rtn_src, &s->key);
		if (v)
			cls |= v->exact;
	}
	s->exe_pos = c.pos;
	s->exe_len = n;
	struct prefix_ctx p = { .pos = c.pos, .n = n, .wid = w->wid, .seen_parent = 0, .cls = 0 };
	bpf_loop(RTN_LONG, prefix_step, &p, 0);
	return cls | p.cls;
unnamed:
	count(RTN_COUNTER_UNNAMED);
	return cls;
}

/* The names of a socket (docs/semantics.md "Socket names"): raw sockets raw, and raw ICMP sockets raw and icmp
 * (RTN_PROTO_RAW_ICMP); packet sockets raw; ping sockets icmp; streams tcp; datagrams udp. */
static __always_inline __u8 socket_name(__u32 family, __u32 type, __u32 protocol)
{
	if (family == AF_PACKET)
		return RTN_PROTO_RAW;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	type &= 0xf;
	int icmp = protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6;
	if (type == SOCK_RAW)
		return icmp ? RTN_PROTO_RAW_ICMP : RTN_PROTO_RAW;
	if (icmp)
		return RTN_PROTO_ICMP;
	if (type == SOCK_STREAM)
		return RTN_PROTO_TCP;
	if (type == SOCK_DGRAM)
		return RTN_PROTO_UDP;
	return 0;
}

static __always_inline int report(struct rtn_workload *w, __u64 cgroup, __s32 rule, __u8 action, __u8 kind,
				  __u8 op, __u8 family, __u8 proto, __u16 port, const __u8 *addr)
{
	count(RTN_COUNTER_DECISIONS);
	if (action == RTN_ACTION_ALLOW)
		return 1;
	/* A workload with sources: the executable process_class() named goes with the event (the process may be
	 * gone when the control plane reads /proc). */
	struct rtn_scratch *s = 0;
	if (rtn_pidns_check && (w->flags & RTN_WL_SOURCES)) {
		__u32 zero = 0;
		s = bpf_map_lookup_elem(&rtn_scratch, &zero);
		if (s && (s->exe_len == 0 || s->exe_len >= RTN_SRC_MAX))
			s = 0;
	}
	struct rtn_event *e;
	if (s) {
		struct rtn_event_exe *x = bpf_ringbuf_reserve(&rtn_events, sizeof(*x), 0);
		if (x) {
			__u32 len = s->exe_len;
			__builtin_memset(x->exe, 0, sizeof(x->exe));
			if (bpf_probe_read_kernel(x->exe, mask255(len), &s->norm[mask4095(s->exe_pos)]) < 0)
				x->exe[0] = 0;
		}
		e = x ? &x->e : 0;
	} else {
		e = bpf_ringbuf_reserve(&rtn_events, sizeof(*e), 0);
	}
	if (!e) {
		count(RTN_COUNTER_DROPPED);
	} else {
		__u64 pid_tgid = bpf_get_current_pid_tgid();
		e->cgroup = cgroup;
		e->wid = w->wid;
		e->rule = rule;
		e->generation = w->generation;
		e->pid = (__u32)pid_tgid;
		e->tgid = pid_tgid >> 32;
		e->uid = (__u32)bpf_get_current_uid_gid();
		e->action = action;
		e->kind = kind;
		e->op = op;
		e->family = family;
		e->proto = proto;
		e->pad = 0;
		e->port = port;
		__builtin_memset(e->addr, 0, sizeof(e->addr));
		if (addr)
			__builtin_memcpy(e->addr, addr, 16);
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		bpf_ringbuf_submit(e, 0);
		count(RTN_COUNTER_REPORTED);
	}
	return action == RTN_ACTION_BLOCK ? 0 : 1;
}

SEC("cgroup/sock_create")
int rtn_sock_create(struct bpf_sock *sk)
{
	__u64 cgroup = 0;
	struct rtn_workload *w = current_workload(&cgroup);
	if (!w)
		return 1;
	__u8 name = socket_name(sk->family, sk->type, sk->protocol);
	if (!name)
		return 1;
	struct rtn_proto_key key = { .wid = w->wid, .proto = name, .op = RTN_OP_SOCKET };
	if (w->flags)
		key.cls = process_class(w);
	struct rtn_verdict *v = bpf_map_lookup_elem(&rtn_proto, &key);
	if (!v || v->kind == RTN_KIND_NONE) {
		count(RTN_COUNTER_DECISIONS);
		return 1;
	}
	return report(w, cgroup, v->rule, v->action, v->kind, RTN_OP_SOCKET, sk->family == AF_INET6 ? 6 : 4,
		      name, 0, 0);
}

static __always_inline void mask(__u8 *out, const __u8 *in, __u32 bytes, __u32 prefix)
{
	for (__u32 i = 0; i < 16; i++) {
		if (i >= bytes) {
			out[i] = 0;
			continue;
		}
		__s32 keep = (__s32)prefix - (__s32)(8 * i);
		if (keep >= 8)
			out[i] = in[i];
		else if (keep <= 0)
			out[i] = 0;
		else
			out[i] = in[i] & (__u8)(0xff << (8 - keep));
	}
}

static __always_inline int candidate_matches(struct rtn_candidate *c, __u8 name, __u16 port, __u32 cls)
{
	if (c->sources && !(c->sources & cls))
		return 0;
	if (c->pts && !(cls & RTN_CLS_PTS))
		return 0;
	/* The rule's protocol is one of the socket's names. */
	if (c->proto && c->proto != name &&
	    !(name == RTN_PROTO_RAW_ICMP && (c->proto == RTN_PROTO_RAW || c->proto == RTN_PROTO_ICMP)))
		return 0;
	if (!c->nports)
		return 1;
	for (int i = 0; i < RTN_MAX_PORTS; i++)
		if (i < c->nports && c->ports[i] == port)
			return 1;
	return 0;
}

/* The first candidate of an address block that matches (index), -1 for none. A global function, verified on its
 * own: inlined in the loop over prefixes, the class bits multiply the verifier's states past its limit. */
__noinline int rtn_first_candidate(struct rtn_addr_value *v, __u32 name, __u32 port, __u32 cls)
{
	if (!v)
		return -1;
	for (int j = 0; j < RTN_MAX_CANDIDATES; j++) {
		if (j >= v->count)
			break;
		if (candidate_matches(&v->c[j], (__u8)name, (__u16)port, cls))
			return j;
	}
	return -1;
}

/* Decides a connect or send to `addr` (family 4: first 4 bytes). Returns 1 to let it proceed, 0 to deny. */
static __always_inline int decide_address(struct bpf_sock_addr *ctx, __u8 op, __u8 family, __u8 *addr)
{
	__u64 cgroup = 0;
	struct rtn_workload *w = current_workload(&cgroup);
	if (!w)
		return 1;
	__u8 name = socket_name(ctx->family, ctx->type, ctx->protocol);
	if (!name)
		return 1;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 cls = w->flags ? process_class(w) : 0;
	struct rtn_addr_key key = { .wid = w->wid, .family = family };
	__u8 n = family == 4 ? w->nprefix4 : w->nprefix6;
	for (int i = 0; i < RTN_MAX_PREFIXES; i++) {
		if (i >= n)
			break;
		__u8 prefix = family == 4 ? w->prefix4[i] : w->prefix6[i];
		key.prefix = prefix;
		mask(key.addr, addr, family == 4 ? 4 : 16, prefix);
		struct rtn_addr_value *v = bpf_map_lookup_elem(&rtn_addr, &key);
		if (!v)
			continue;
		int r = rtn_first_candidate(v, name, port, cls);
		if (r >= 0) {
			__u32 j = (__u32)r;
			_Static_assert(RTN_MAX_CANDIDATES == 4, "the mask below");
			asm volatile("%[j] &= 3" : [j] "+r"(j));
			struct rtn_candidate *c = &v->c[j];
			return report(w, cgroup, c->rule, c->action, RTN_KIND_RULE, op, family, name, port, addr);
		}
	}
	struct rtn_proto_key pk = { .wid = w->wid, .proto = name, .op = RTN_OP_CONNECT, .cls = cls };
	struct rtn_verdict *pv = bpf_map_lookup_elem(&rtn_proto, &pk);
	if (!pv || pv->kind == RTN_KIND_NONE) {
		count(RTN_COUNTER_DECISIONS);
		return 1;
	}
	return report(w, cgroup, pv->rule, pv->action, pv->kind, op, family, name, port, addr);
}

static __always_inline int decide4(struct bpf_sock_addr *ctx, __u8 op)
{
	__u8 addr[16] = {};
	__u32 ip = ctx->user_ip4;
	__builtin_memcpy(addr, &ip, 4);
	return decide_address(ctx, op, 4, addr);
}

static __always_inline int decide6(struct bpf_sock_addr *ctx, __u8 op)
{
	__u8 addr[16] = {};
	__u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1], w2 = ctx->user_ip6[2], w3 = ctx->user_ip6[3];
	__builtin_memcpy(addr, &w0, 4);
	__builtin_memcpy(addr + 4, &w1, 4);
	__builtin_memcpy(addr + 8, &w2, 4);
	__builtin_memcpy(addr + 12, &w3, 4);
	/* An IPv4-mapped destination (::ffff:a.b.c.d) is the IPv4 address it maps. */
	if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff)) {
		__u8 v4[16] = {};
		__builtin_memcpy(v4, &w3, 4);
		return decide_address(ctx, op, 4, v4);
	}
	return decide_address(ctx, op, 6, addr);
}

SEC("cgroup/connect4")
int rtn_connect4(struct bpf_sock_addr *ctx) { return decide4(ctx, RTN_OP_CONNECT); }

SEC("cgroup/connect6")
int rtn_connect6(struct bpf_sock_addr *ctx) { return decide6(ctx, RTN_OP_CONNECT); }

SEC("cgroup/sendmsg4")
int rtn_sendmsg4(struct bpf_sock_addr *ctx) { return decide4(ctx, RTN_OP_SENDMSG); }

SEC("cgroup/sendmsg6")
int rtn_sendmsg6(struct bpf_sock_addr *ctx) { return decide6(ctx, RTN_OP_SENDMSG); }
