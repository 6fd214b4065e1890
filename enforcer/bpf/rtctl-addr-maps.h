/* Address rules (network.matchAddresses) of the BPF-LSM plane: the maps the socket_connect and
 * socket_sendmsg hooks of rtctl-lsm.bpf.c read, the loader (loader/rtctl-bpf-loader.c) pins and clears,
 * and encode-addresses.ts fills (it holds the same numbers; test/enforcer/bpf/encode-addresses.test.ts
 * compiles this header and compares them). Design in docs/bpf-lsm.md "Address rules".
 *
 * rt_addr is an LPM trie over (slot, family, network address). Each entry is one CIDR block of the table's
 * address rules and lists every address rule whose block contains it (itself included), ascending by rule
 * index, that is in precedence order. The destinations a block holds are held by every block containing
 * it, so the longest match lists every address rule that can match a destination: one lookup, then the
 * first rule in the list whose policy, protocol, ports, sources and pts apply decides. */
#ifndef RTCTL_ADDR_MAPS_H
#define RTCTL_ADDR_MAPS_H

#include "rtctl-maps.h"

#define RT_MAX_ADDR_BLOCKS 4096 /* distinct CIDR blocks per slot */
#define RT_MAX_ADDR_REFS 64     /* address rules whose blocks contain one block (the block's own included) */
#define RT_MAX_ADDR_PORTS 8     /* ports of one address rule */
#define RT_ADDR_KEY_BITS 32     /* prefix bits of slot, family and padding before the address */

/* Socket names, the codes of the cgroup network plane (RTN_PROTO_* in enforcer/network/rtctl-net-maps.h). */
#define RT_NET_TCP 1
#define RT_NET_UDP 2
#define RT_NET_ICMP 3
#define RT_NET_RAW 4
#define RT_NET_RAW_ICMP 5 /* a raw ICMP socket: named raw and icmp */
#define RT_NET_NEVER 255 /* an address rule's protocol no socket of this plane is named by (sctp, icmpv6) */

/* rt_addr (LPM trie): key of one block, or of one destination (prefixlen RT_ADDR_KEY_BITS + 128). */
struct rt_addr_key {
	__u32 prefixlen; /* RT_ADDR_KEY_BITS + the block's prefix length */
	__u8 slot;
	__u8 family; /* 4 or 6 */
	__u8 pad[2];
	__u8 addr[16]; /* network address, host bits cleared; IPv4 in the first 4 bytes */
};

/* One address rule as the hooks check it (the rest is its rt_rules record). */
struct rt_addr_ref {
	__u32 rule;  /* index in rt_rules */
	__u8 proto;  /* 0 any, RT_NET_* */
	__u8 nports; /* 0: any port */
	__u16 ports[RT_MAX_ADDR_PORTS];
	__u16 pad;
};

struct rt_addr_val {
	__u32 count;
	__u32 pad;
	struct rt_addr_ref refs[RT_MAX_ADDR_REFS];
};

/* rt_addr_wl (array): index slot * RT_MAX_WORKLOADS + wid. Least-permissive mode of connects and sends:
 * bit 4 of rt_workload.lp_unscoped (RT_ALLOW_ADDRESS_BIT) for Allow address rules without fromSource,
 * these source ids for those with one. */
struct rt_addr_wl {
	__u64 lp_sources[RT_SRC_WORDS];
};

/* Event resource of a connect or send to an address: '@', family '4' or '6', the 16 address bytes in hex,
 * the port in 4 hex digits, the socket name ("@4a9fea9fe000000000000000000000000" "0050" "tcp");
 * bpf-lsm-plane.ts turns it into `169.254.169.254:80`. */
#define RT_ADDR_RESOURCE_LEN 38

#endif
