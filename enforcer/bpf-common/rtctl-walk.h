/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the BPF programs that name a dentry as a process's root names it, from the kernel's own objects, as
 * d_path does (bpf_d_path is not allowed where they run): the cgroup network plane names the acting executable
 * (enforcer/network/rtctl-net.bpf.c), the system call plane the object of a call (enforcer/syscalls/
 * rtctl-sys.bpf.c). Each program's bpf_loop callback looks up its own scratch buffer, calls walk_climb(), and
 * puts the name of a plain directory level in front of the name so far with its own bounds. */
#ifndef RTCTL_WALK_H
#define RTCTL_WALK_H

/* v & 255 and v & 4095, in a way the compiler cannot drop (the verifier needs the bound on a helper's size
 * argument and on a buffer index). */
static __always_inline __u32 mask255(__u32 v)
{
	asm volatile("%[v] &= 255" : [v] "+r"(v));
	return v;
}

static __always_inline __u32 mask4095(__u32 v)
{
	asm volatile("%[v] &= 4095" : [v] "+r"(v));
	return v;
}

/* The walk's state: the current dentry of the current vfsmount, and the process's root it stops at. */
struct walk_ctx {
	__u64 dentry;
	__u64 vfsmnt;
	__u64 root_dentry;
	__u64 root_mnt;
	__u32 pos; /* the name so far is norm[pos .. end) of the program's scratch buffer */
	__u32 done;
	__u32 bad;
};

/* The part of one step that writes no name. Returns 1 when the walk ends here (the root reached: done; the top
 * of the mount tree without meeting the root: bad, the dentry is outside the root), 0 when it moved from a
 * mount's top to that mount's mount point in the parent mount, and -1 when *d is a plain directory level: the
 * caller puts its name in front and goes on at *parent. */
static __always_inline int walk_climb(struct walk_ctx *c, struct dentry **d, struct dentry **parent)
{
	if (c->dentry == c->root_dentry && c->vfsmnt == c->root_mnt) {
		c->done = 1;
		return 1;
	}
	*d = (struct dentry *)c->dentry;
	struct vfsmount *vm = (struct vfsmount *)c->vfsmnt;
	*parent = BPF_CORE_READ(*d, d_parent);
	if (*d != BPF_CORE_READ(vm, mnt_root) && *d != *parent)
		return -1;
	struct mount *m = (struct mount *)(c->vfsmnt - bpf_core_field_offset(struct mount, mnt));
	struct mount *pm = BPF_CORE_READ(m, mnt_parent);
	if (pm == m) {
		c->bad = 1;
		return 1;
	}
	c->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
	c->vfsmnt = (__u64)pm + bpf_core_field_offset(struct mount, mnt);
	return 0;
}

#endif
