/* The binary rule table layout (docs/rule-table.md), the contract between the compiler and every data plane.
 *
 * One header for every C reader: the fanotify helper (enforcer/native/), the BPF-LSM programs and their loader
 * (enforcer/bpf/). The TypeScript side (compiler/rule-table/rule-table-format.ts) holds the same numbers; the
 * test test/compiler/rule-table/rule-table-layout.test.ts compiles this header and compares them.
 *
 * All integers in a table are little-endian. The structs below describe the records field by field (their
 * offsets are what the readers use); a reader on a little-endian host may also overlay them on the bytes,
 * since every field is naturally aligned and the sizes are asserted. */
#ifndef RTCTL_RULE_TABLE_LAYOUT_H
#define RTCTL_RULE_TABLE_LAYOUT_H

#if !defined(__bpf__) && !defined(__VMLINUX_H__)
#include <linux/types.h>
#endif

/* "RTRULES\0" */
#define RT_TABLE_MAGIC "RTRULES\0"
#define RT_TABLE_MAGIC_SIZE 8
/* A reader refuses any other major version; any minor version of its major is readable. */
#define RT_TABLE_VERSION_MAJOR 2
#define RT_TABLE_VERSION_MINOR 0

#define RT_TABLE_HEADER_SIZE 128
#define RT_TABLE_POLICY_SIZE 40
#define RT_TABLE_LABEL_SIZE 12
#define RT_TABLE_RULE_SIZE 64
#define RT_TABLE_SOURCE_SIZE 8
#define RT_TABLE_NODE_SIZE 24
#define RT_TABLE_REF_SIZE 4
#define RT_TABLE_BUCKET_SIZE 4
#define RT_TABLE_MIN_BUCKETS 16
#define RT_TABLE_SECTION_ALIGN 8
#define RT_TABLE_STRING_ALIGN 4

/* Operation classes. */
#define RT_CLASS_PROCESS 0
#define RT_CLASS_FILE 1
#define RT_CLASS_NETWORK 2
#define RT_CLASS_CAPABILITIES 3

/* Actions. */
#define RT_ACTION_ALLOW 0
#define RT_ACTION_AUDIT 1
#define RT_ACTION_BLOCK 2

/* Rule matcher kinds. */
#define RT_MATCH_PATH 1
#define RT_MATCH_EXECNAME 2
#define RT_MATCH_DIRECTORY 3
#define RT_MATCH_PATTERN 4
#define RT_MATCH_PROTOCOL 5
#define RT_MATCH_CAPABILITY 6
/* network.matchAddresses: value is the canonical CIDR text, depth its prefix length, protocol the IP protocol
 * number (0: any), and args_start/args_count list the destination ports as plain u32 references. */
#define RT_MATCH_ADDRESS 7

/* Rule flag bits. */
#define RT_FLAG_RECURSIVE 1
#define RT_FLAG_READONLY 2
#define RT_FLAG_OWNERONLY 4
#define RT_FLAG_PTS 8
#define RT_FLAG_ARGS 16

/* Label record operators. */
#define RT_LABEL_EQUALS 0
#define RT_LABEL_IN 1
#define RT_LABEL_NOT_IN 2

/* Source record kinds. */
#define RT_SOURCE_PATH 1
#define RT_SOURCE_DIRECTORY 3

/* Policy kinds. */
#define RT_POLICY_RUNTIME 0
#define RT_POLICY_HOST 1

/* Index node kinds. */
#define RT_NODE_PATH 1
#define RT_NODE_EXECNAME 2
#define RT_NODE_DIR 3
#define RT_NODE_PATTERN_DIR 4
#define RT_NODE_PROTOCOL 5
#define RT_NODE_CAPABILITY 6
#define RT_NODE_ALLOW_SOURCE_PATH 7
#define RT_NODE_ALLOW_SOURCE_DIR 8
#define RT_NODE_ADDRESS 9
#define RT_NODE_ALLOW_ADDRESS_SOURCE_PATH 10
#define RT_NODE_ALLOW_ADDRESS_SOURCE_DIR 11

/* Bit of a policy's allow_unscoped/allow_scoped: an Allow address rule (connects and sends least-permissive). */
#define RT_ALLOW_ADDRESS_BIT 16

/* IP protocol numbers an address rule names. */
#define RT_IPPROTO_ICMP 1
#define RT_IPPROTO_TCP 6
#define RT_IPPROTO_UDP 17
#define RT_IPPROTO_ICMPV6 58
#define RT_IPPROTO_SCTP 132

/* FNV-1a 64 of the index: h = OFFSET; for each byte b of [class, kind, key...]: h ^= b; h *= PRIME. */
#define RT_FNV_OFFSET 0xcbf29ce484222325ULL
#define RT_FNV_PRIME 0x100000001b3ULL

struct rt_table_header {
	__u8 magic[8];
	__u16 version_major;
	__u16 version_minor;
	__u32 header_size;
	__u32 file_size;
	__u32 flags;
	__u32 string_offset;
	__u32 string_size;
	__u32 policy_offset;
	__u32 policy_count;
	__u32 label_offset;
	__u32 label_count;
	__u32 rule_offset;
	__u32 rule_count;
	__u32 source_offset;
	__u32 source_count;
	__u32 ref_offset;
	__u32 ref_count;
	__u32 node_offset;
	__u32 node_count;
	__u32 bucket_offset;
	__u32 bucket_count;
	__u8 default_posture[4];
	__u8 reserved[36];
};

struct rt_table_policy {
	__u32 name;           /* string reference */
	__u32 namespace_;     /* string reference; empty for host policies */
	__u8 kind;            /* RT_POLICY_* */
	__u8 allow_unscoped;  /* bit c: an Allow rule of class c without fromSource */
	__u8 allow_scoped;    /* bit c: an Allow rule of class c with fromSource (informational) */
	__u8 reserved0;
	__u32 label_start;
	__u32 label_count;
	__u32 file;           /* string reference */
	__u32 line;
	__u32 expression_groups;
	__u8 reserved[8];
};

struct rt_table_label {
	__u32 key;   /* string reference */
	__u32 value; /* string reference */
	__u8 op;     /* RT_LABEL_* */
	__u8 reserved;
	__u16 group;
};

struct rt_table_rule {
	__u32 policy;
	__u8 cls;     /* RT_CLASS_* */
	__u8 matcher; /* RT_MATCH_* */
	__u8 action;  /* RT_ACTION_* */
	__u8 flags;   /* RT_FLAG_* */
	__u32 value;  /* string reference */
	__u16 depth;    /* directory depth; prefix length of an address rule */
	__u16 protocol; /* address rules: IP protocol number, 0 any; 0 otherwise */
	__u32 source_start;
	__u32 source_count;
	__u32 severity;
	__u32 message; /* string reference */
	__u32 tags_start;
	__u32 tags_count;
	__u32 args_start;
	__u32 args_count;
	__u32 file; /* string reference */
	__u32 line;
	__u32 column;
	__u32 pointer; /* string reference */
};

struct rt_table_source {
	__u32 value; /* string reference */
	__u8 kind;   /* RT_SOURCE_* */
	__u8 recursive;
	__u16 reserved;
};

struct rt_table_node {
	__u64 hash;
	__u32 key; /* string reference */
	__u8 cls;
	__u8 kind; /* RT_NODE_* */
	__u16 reserved;
	__u32 refs_start;
	__u32 refs_count;
};

#define RT_OFFSETOF(type, field) __builtin_offsetof(struct type, field)
#define RT_ASSERT_OFFSET(type, field, at) \
	_Static_assert(RT_OFFSETOF(type, field) == (at), #type "." #field " is at offset " #at)

_Static_assert(sizeof(struct rt_table_header) == RT_TABLE_HEADER_SIZE, "header size");
_Static_assert(sizeof(struct rt_table_policy) == RT_TABLE_POLICY_SIZE, "policy record size");
_Static_assert(sizeof(struct rt_table_label) == RT_TABLE_LABEL_SIZE, "label record size");
_Static_assert(sizeof(struct rt_table_rule) == RT_TABLE_RULE_SIZE, "rule record size");
_Static_assert(sizeof(struct rt_table_source) == RT_TABLE_SOURCE_SIZE, "source record size");
_Static_assert(sizeof(struct rt_table_node) == RT_TABLE_NODE_SIZE, "node record size");

RT_ASSERT_OFFSET(rt_table_header, version_major, 8);
RT_ASSERT_OFFSET(rt_table_header, version_minor, 10);
RT_ASSERT_OFFSET(rt_table_header, header_size, 12);
RT_ASSERT_OFFSET(rt_table_header, file_size, 16);
RT_ASSERT_OFFSET(rt_table_header, flags, 20);
RT_ASSERT_OFFSET(rt_table_header, string_offset, 24);
RT_ASSERT_OFFSET(rt_table_header, policy_offset, 32);
RT_ASSERT_OFFSET(rt_table_header, label_offset, 40);
RT_ASSERT_OFFSET(rt_table_header, rule_offset, 48);
RT_ASSERT_OFFSET(rt_table_header, source_offset, 56);
RT_ASSERT_OFFSET(rt_table_header, ref_offset, 64);
RT_ASSERT_OFFSET(rt_table_header, node_offset, 72);
RT_ASSERT_OFFSET(rt_table_header, bucket_offset, 80);
RT_ASSERT_OFFSET(rt_table_header, bucket_count, 84);
RT_ASSERT_OFFSET(rt_table_header, default_posture, 88);
RT_ASSERT_OFFSET(rt_table_header, reserved, 92);

RT_ASSERT_OFFSET(rt_table_policy, namespace_, 4);
RT_ASSERT_OFFSET(rt_table_policy, kind, 8);
RT_ASSERT_OFFSET(rt_table_policy, allow_unscoped, 9);
RT_ASSERT_OFFSET(rt_table_policy, allow_scoped, 10);
RT_ASSERT_OFFSET(rt_table_policy, label_start, 12);
RT_ASSERT_OFFSET(rt_table_policy, label_count, 16);
RT_ASSERT_OFFSET(rt_table_policy, file, 20);
RT_ASSERT_OFFSET(rt_table_policy, line, 24);
RT_ASSERT_OFFSET(rt_table_policy, expression_groups, 28);

RT_ASSERT_OFFSET(rt_table_label, value, 4);
RT_ASSERT_OFFSET(rt_table_label, op, 8);
RT_ASSERT_OFFSET(rt_table_label, group, 10);

RT_ASSERT_OFFSET(rt_table_rule, cls, 4);
RT_ASSERT_OFFSET(rt_table_rule, matcher, 5);
RT_ASSERT_OFFSET(rt_table_rule, action, 6);
RT_ASSERT_OFFSET(rt_table_rule, flags, 7);
RT_ASSERT_OFFSET(rt_table_rule, value, 8);
RT_ASSERT_OFFSET(rt_table_rule, depth, 12);
RT_ASSERT_OFFSET(rt_table_rule, protocol, 14);
RT_ASSERT_OFFSET(rt_table_rule, source_start, 16);
RT_ASSERT_OFFSET(rt_table_rule, source_count, 20);
RT_ASSERT_OFFSET(rt_table_rule, severity, 24);
RT_ASSERT_OFFSET(rt_table_rule, message, 28);
RT_ASSERT_OFFSET(rt_table_rule, tags_start, 32);
RT_ASSERT_OFFSET(rt_table_rule, tags_count, 36);
RT_ASSERT_OFFSET(rt_table_rule, args_start, 40);
RT_ASSERT_OFFSET(rt_table_rule, args_count, 44);
RT_ASSERT_OFFSET(rt_table_rule, file, 48);
RT_ASSERT_OFFSET(rt_table_rule, line, 52);
RT_ASSERT_OFFSET(rt_table_rule, column, 56);
RT_ASSERT_OFFSET(rt_table_rule, pointer, 60);

RT_ASSERT_OFFSET(rt_table_source, kind, 4);
RT_ASSERT_OFFSET(rt_table_source, recursive, 5);

RT_ASSERT_OFFSET(rt_table_node, key, 8);
RT_ASSERT_OFFSET(rt_table_node, cls, 12);
RT_ASSERT_OFFSET(rt_table_node, kind, 13);
RT_ASSERT_OFFSET(rt_table_node, refs_start, 16);
RT_ASSERT_OFFSET(rt_table_node, refs_count, 20);

#endif
