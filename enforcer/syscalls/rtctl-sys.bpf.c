// SPDX-License-Identifier: GPL-2.0
/* The system call audit plane: a BTF tracepoint on sys_enter reports the calls a workload's `syscalls` rules
 * name, filtered in the kernel by call number (rts_nrs, one array lookup for every call of the node) and by
 * workload (the deepest registered cgroup among the caller's ancestors) and watch (rts_watch). The event carries
 * the call's arguments, the path argument read from the caller's memory, and the caller's executable as its
 * last exec named it (rts_exe, kept by sched_process_exec and sched_process_fork). The control plane decides
 * which rule it is (paths, fromSource, precedence). sched_process_exec also reports the exec of a file without
 * links (a memfd, an O_TMPFILE or a deleted file) in a workload with the filelessExec preset, and kills the
 * process before its first instruction when the preset blocks. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "rtctl-sys-maps.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGKILL 9

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

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&rts_counters, &which);
	if (c)
		*c += 1;
}

/* The workload of the current process: the deepest registered cgroup among its ancestors. The host workload
 * (registered at the root cgroup) takes only processes of the initial pid namespace, so that a container the
 * control plane does not enforce is not decided by host policies. */
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
	if (found && found->host && task->thread_pid && task->thread_pid->level != 0)
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

static __always_inline __u64 arg_of(__u64 *args, int i)
{
	switch (i) {
	case 0: return args[0];
	case 1: return args[1];
	case 2: return args[2];
	case 3: return args[3];
	case 4: return args[4];
	case 5: return args[5];
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(rts_sys_enter, struct pt_regs *regs, long id)
{
	if (id < 0 || id >= RTS_NR_MAX)
		return 0;
	__u32 nr = (__u32)id;
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
	struct rts_event *e = bpf_ringbuf_reserve(&rts_events, sizeof(*e), 0);
	if (!e) {
		count(RTS_COUNTER_DROPPED);
		return 0;
	}
	e->kind = RTS_EVENT_SYSCALL;
	e->nr = nr;
	e->args[0] = regs->di;
	e->args[1] = regs->si;
	e->args[2] = regs->dx;
	e->args[3] = regs->r10;
	e->args[4] = regs->r8;
	e->args[5] = regs->r9;
	e->nlink = 0;
	e->action = RTS_ACTION_AUDIT;
	e->path_arg = watch->path_arg;
	e->dirfd_arg = watch->dirfd_arg;
	e->pad = 0;
	e->name[0] = 0;
	e->path[0] = 0;
	fill_common(e, w, cgroup);
	if (watch->path_arg >= 0 && watch->path_arg < 6) {
		const char *up = (const char *)arg_of(e->args, watch->path_arg);
		if (bpf_probe_read_user_str(e->path, sizeof(e->path), up) < 0)
			e->path[0] = 0;
	}
	bpf_ringbuf_submit(e, 0);
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
