// SPDX-License-Identifier: GPL-2.0
/* Test-only (never part of the plane): a BPF-LSM program on file_open that decides nothing. The
 * benchmark (bench/enforcer/bpf-in-guest.ts) times the open loop with it attached to measure what the
 * LSM hook's dispatch alone costs, the floor under rt_file_open. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(rt_noop_file_open, struct file *file, int ret)
{
	return ret;
}
