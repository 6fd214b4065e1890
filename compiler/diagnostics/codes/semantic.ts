// Diagnostic codes of the semantic stage (RT3xxx): what the schema cannot say.
import type { CodeInfo } from '../code-info.js';

export const SEMANTIC_CODES = [
  {
    code: 'RT3001',
    severity: 'error',
    name: 'relative-path',
    summary:
      'A path, directory or pattern is relative; rules match absolute paths only, so it would never match.',
  },
  {
    code: 'RT3002',
    severity: 'error',
    name: 'directory-without-slash',
    summary: 'A directory does not end in /; write dir: /etc/ (or use matchPaths for a single file).',
  },
  {
    code: 'RT3003',
    severity: 'warning',
    name: 'duplicate-rule',
    summary: 'The same rule is written twice for the same workloads; the second adds nothing.',
  },
  {
    code: 'RT3004',
    severity: 'error',
    name: 'conflicting-actions',
    summary:
      'The same matcher has different actions in policies that select overlapping workloads; both places are reported (Block > Audit > Allow decides, but say what you mean).',
  },
  {
    code: 'RT3005',
    severity: 'warning',
    name: 'allow-under-audit-posture',
    summary:
      'An Allow policy applies in a namespace whose posture is audit: operations outside the allow list are only alerted, not blocked.',
  },
  {
    code: 'RT3006',
    severity: 'warning',
    name: 'unreachable-from-source',
    summary:
      'A fromSource executable is itself blocked from running for the same workloads, so the rule can never match.',
  },
  {
    code: 'RT3007',
    severity: 'error',
    name: 'host-policy-with-selector',
    summary: 'A RuntimeHostPolicy uses spec.selector; host policies select nodes with spec.nodeSelector.',
  },
  {
    code: 'RT3008',
    severity: 'error',
    name: 'invalid-name',
    summary:
      'metadata.name (or namespace) is not a DNS-1123 name (lower case letters, digits, - and ., at most 253 characters).',
  },
  {
    code: 'RT3009',
    severity: 'error',
    name: 'missing-action',
    summary: 'A rule resolves to no action: set action on the rule, its section or spec.',
  },
  {
    code: 'RT3010',
    severity: 'error',
    name: 'path-ends-with-slash',
    summary: 'A path ends in /; use matchDirectories with dir for directories.',
  },
  {
    code: 'RT3011',
    severity: 'warning',
    name: 'empty-policy',
    summary: 'The policy has no rules; it selects workloads but changes nothing.',
  },
  {
    code: 'RT3012',
    severity: 'error',
    name: 'duplicate-policy',
    summary:
      'Two documents define the same policy (kind, namespace and name); the later one would replace the earlier.',
  },
  {
    code: 'RT3013',
    severity: 'warning',
    name: 'unknown-preset',
    summary:
      'A preset name is not one rtctl knows (filelessExec, anonMapExec, protectEnv, protectProc, exec).',
  },
  {
    code: 'RT3015',
    severity: 'warning',
    name: 'syscall-source-dir-without-slash',
    summary:
      'A syscalls fromSource dir does not end in /; accepted as the reference does, and read as that directory.',
  },
  {
    code: 'RT3016',
    severity: 'warning',
    name: 'not-enforced',
    summary:
      'A rule, or one of its options, is accepted by the schema but no target enforces it (syscalls, presets, matchDNSQueries, device rules, allowedArgs; see docs/enforcement.md); it is kept in the manifests only. An error under --require-enforced.',
  },
  {
    code: 'RT3017',
    severity: 'warning',
    name: 'empty-from-source',
    summary:
      'fromSource is empty (no value, or []); accepted as the reference accepts it and read as no source restriction: the rule applies to every executable. Remove the key or list the executables.',
  },
  {
    code: 'RT3018',
    severity: 'warning',
    name: 'not-enforced-on-target',
    summary:
      'Some targets do not enforce this rule (or only audit it): the message names them and what the rule gets there (docs/enforcement.md). An error under --require-enforced for a named target.',
  },
  {
    code: 'RT3019',
    severity: 'error',
    name: 'invalid-cidr',
    summary:
      'A network.matchAddresses cidr is not an IPv4 or IPv6 CIDR block (address/prefix, prefix 0-32 or 0-128); the rule could never match.',
  },
  {
    code: 'RT3020',
    severity: 'warning',
    name: 'cidr-host-bits-set',
    summary:
      'A network.matchAddresses cidr has bits set after its prefix (10.0.0.1/8); it is read as its network (10.0.0.0/8). Write the network, or a /32 (/128) for one host.',
  },
  {
    code: 'RT3021',
    severity: 'error',
    name: 'ports-without-port-protocol',
    summary:
      'A network.matchAddresses rule lists ports with a protocol that has none (icmp, icmpv6); the rule could never match.',
  },
  {
    code: 'RT3025',
    severity: 'warning',
    name: 'pts-false',
    summary:
      'pts: false is read as the reference reads it: the rule applies only to processes with a terminal, as with pts: true. Remove pts to apply the rule to every process.',
  },
  {
    code: 'RT3030',
    severity: 'error',
    name: 'hardening-control-id',
    summary:
      'A hardening annotation (hardening.security.runtime.com/cis, mitre, nist or stig) lists an id that is not written as that catalogue writes its control ids, or lists one twice (docs/hardening.md).',
  },
  {
    code: 'RT3031',
    severity: 'error',
    name: 'hardening-metadata',
    summary:
      'A hardening policy has an unknown hardening.security.runtime.com/ annotation or label, an unknown profile, a rationale, attack or may-break that is not one line, or lacks its controls, rationale or attack (docs/hardening.md).',
  },
  {
    code: 'RT3032',
    severity: 'warning',
    name: 'hardening-control-unlisted',
    summary:
      'A hardening annotation names a well-formed control id that the control catalogue (compiler/bundles/control-catalogue.ts) does not list: it has not been checked against its catalogue, and rtctl cannot show its title or edition (docs/hardening.md).',
  },
] as const satisfies readonly CodeInfo[];
