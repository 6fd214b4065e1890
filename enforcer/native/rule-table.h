/* Reader and lookup walk for the rule table binary layout (docs/rule-table.md). The layout itself (sizes,
 * offsets, codes, version) is compiler/rule-table/rule-table-layout.h, shared with the BPF programs. */
#ifndef RTCTL_RULE_TABLE_H
#define RTCTL_RULE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "rule-table-layout.h"

struct rule_table {
  const uint8_t *data;
  uint32_t size;
  uint32_t string_offset, string_size;
  uint32_t policy_offset, policy_count;
  uint32_t label_offset, label_count;
  uint32_t rule_offset, rule_count;
  uint32_t source_offset, source_count;
  uint32_t ref_offset, ref_count;
  uint32_t node_offset, node_count;
  uint32_t bucket_offset, bucket_count;
  /* Facts over all rules: which access facts a lookup may need. */
  int has_sources, has_readonly, has_owneronly, has_pts;
};

/* Lookup inputs (docs/rule-table.md "Lookup walk"). */
struct lookup {
  const uint64_t *policy_set; /* bit set over policy indices */
  int cls;
  const char *resource;
  const char *actor; /* may be "" when unknown */
  int write, owner, tty;
  int posture_block; /* posture of the class (Process: file posture) */
  int allow_mask;    /* rt_allow_mask() of the policy set, computed once per workload */
};

/* Result: rule >= 0 (its action in action), or rule == -1 with posture != 0 (least-permissive), or allow. */
struct decision {
  int32_t rule;
  int action;   /* RT_ACTION_* of the decision */
  int posture;  /* 1 when the posture decided */
  int report;   /* 1 for Block, Audit and posture decisions */
};

/* Validates the table; returns 0 or -1 with a message in err. */
int rt_open(struct rule_table *t, const uint8_t *data, uint32_t size, char *err, size_t errlen);
/* Per-workload fact: OR of allow_unscoped over the policy set (bit c: least-permissive for class c). */
int rt_allow_mask(const struct rule_table *t, const uint64_t *set);
void rt_decide(const struct rule_table *t, const struct lookup *in, struct decision *out);
/* Per-workload fact: bit c set when an Allow rule of class c scoped by fromSource is in the set (such a rule
 * puts class c in least-permissive mode for its sources, whatever the path). */
int rt_scoped_allow_mask(const struct rule_table *t, const uint64_t *set);
/* Per-workload fact: bit c set when a rule of class c other than an Allow rule is in the set. Without one
 * (and with class c neither least-permissive nor scoped), every path of class c is allowed without alert:
 * the answer does not depend on the name a file is opened by. */
int rt_non_allow_mask(const struct rule_table *t, const uint64_t *set);
/* 1 when the decision for (class, resource) under the policy set is "allow without alert" for every actor,
 * access mode, owner and terminal: no candidate rule of the set other than Allow rules can match the path
 * under any facts, and the class is not least-permissive (allow_mask) nor can be for some source
 * (scoped_mask). Such a decision cannot change until the state does; the helper then stops asking. */
int rt_ignorable(const struct rule_table *t, const uint64_t *set, int allow_mask, int scoped_mask, int cls,
                 const char *resource);
/* 1 when the decision for every non-directory child `dir` + x (x a name without '/') of the directory `dir`
 * (absolute, ending in '/') is "allow without alert" under the policy set for every actor, access mode,
 * owner and terminal, whatever x is: the class is neither least-permissive nor scoped (as rt_ignorable), and
 * no rule of the set and class other than an Allow rule can match such a child (a path rule naming one, any
 * base-name rule, a directory rule on `dir` or a recursive one on an ancestor, a glob whose literal prefix
 * directory is `dir` or an ancestor). A scan of the rules: callers remember the answer per directory. */
int rt_dir_ignorable(const struct rule_table *t, const uint64_t *set, int allow_mask, int scoped_mask, int cls,
                     const char *dir);
/* A string by reference, NUL-terminated inside the table ("" when out of range). */
const char *rt_str(const struct rule_table *t, uint32_t ref);
uint32_t rt_rule_u32(const struct rule_table *t, uint32_t rule, uint32_t off);
const uint8_t *rt_rule(const struct rule_table *t, uint32_t rule);
uint32_t rt_ref(const struct rule_table *t, uint32_t i);
const char *rt_policy_name(const struct rule_table *t, uint32_t policy);

#endif
