// Diagnostic codes of the backend area (RT4xxx): what a target cannot express, said at compile time.
// RT40xx AppArmor, RT41xx SELinux, RT42xx the rule table. See ../code-info.ts; docs/diagnostics.md is generated from all lists.
import type { CodeInfo } from '../code-info.js';

export const BACKEND_CODES = [
  {
    code: 'RT4001',
    severity: 'warning',
    name: 'apparmor-deny-wins',
    summary:
      'An Allow or Audit rule is more specific than a Block rule that covers it; AppArmor deny rules always win, so the AppArmor profile denies what the rule table allows. Narrow the Block rule.',
  },
  {
    code: 'RT4002',
    severity: 'warning',
    name: 'apparmor-unsupported-protocol',
    summary:
      'AppArmor network rules cannot name this protocol (icmpv6, sctp, dccp): the rule is left out of the AppArmor profile; or AppArmor reads it narrower than rtctl (icmp: IPv4 raw ICMP only; raw: not packet datagram sockets): the rule is written, and the sockets it misses are neither denied nor reported there (docs/enforcement.md says which targets enforce it).',
  },
  {
    code: 'RT4003',
    severity: 'error',
    name: 'apparmor-snippet-rejected',
    summary:
      'spec.apparmor may hold only rule lines ending in a comma, without braces, quotes, carets, include or profile keywords (they could escape the profile); fix the snippet.',
  },
  {
    code: 'RT4004',
    severity: 'warning',
    name: 'apparmor-condition-ignored',
    summary:
      'AppArmor cannot express this (pts, allowedArgs: the rule is written without it; syscalls, presets, matchDNSQueries, device rules: left out); the message names the targets that enforce it (docs/enforcement.md).',
  },
  {
    code: 'RT4005',
    severity: 'info',
    name: 'apparmor-host-policy',
    summary:
      'Host policies are not compiled to AppArmor profiles (there is no one program to attach them to); they go to the rule table and the SELinux module.',
  },
  {
    code: 'RT4006',
    severity: 'warning',
    name: 'apparmor-source-directory',
    summary:
      "fromSource by directory would need a glob exec transition, which AppArmor cannot combine with the profile's other exec rules; the rule is left out of the AppArmor profile (its fromSource paths are kept); the data planes enforce it.",
  },
  {
    code: 'RT4101',
    severity: 'warning',
    name: 'selinux-no-least-permissive',
    summary:
      'SELinux modules only add rules; an Allow list cannot make other host processes least-permissive, so unlisted operations stay governed by the base policy.',
  },
  {
    code: 'RT4102',
    severity: 'warning',
    name: 'selinux-from-source',
    summary:
      'fromSource by directory would relabel every binary below it; SELinux modules give a domain only to fromSource paths, so directory sources are left out; the data planes enforce them.',
  },
  {
    code: 'RT4103',
    severity: 'warning',
    name: 'selinux-owner-only',
    summary:
      'SELinux has no file-owner condition; an ownerOnly Block denies every user, an ownerOnly Allow allows every user of the subject domains.',
  },
  {
    code: 'RT4104',
    severity: 'warning',
    name: 'selinux-network-capabilities',
    summary:
      "Network and capability rules of host policies would change the base policy's own domains; the SELinux module leaves them out (docs/enforcement.md says which targets enforce them).",
  },
  {
    code: 'RT4105',
    severity: 'warning',
    name: 'selinux-condition-ignored',
    summary:
      'SELinux cannot express this (pts, allowedArgs: the rule is written without it; syscalls, presets, matchDNSQueries, device rules: left out); the message names the targets that enforce it (docs/enforcement.md).',
  },
  {
    code: 'RT4106',
    severity: 'warning',
    name: 'selinux-unrepresentable-path',
    summary:
      'A path holds a space, a quote, a control or non-ASCII character, which a file_contexts entry cannot carry exactly, or lies on /proc or /sys, which file contexts do not label; the rule is left out of the SELinux module and enforced by the rule table.',
  },
  {
    code: 'RT4201',
    severity: 'warning',
    name: 'rule-table-syscalls-not-carried',
    summary:
      'The compiled rule table carries no syscalls rules or presets; an enforcer run from it (--rule-table) neither audits these rules nor enforces filelessExec. Run the enforcer from the policies (docs/syscalls.md).',
  },
] as const satisfies readonly CodeInfo[];

/** Severity and summary of a backend code. */
export function findBackendCode(code: string): CodeInfo | undefined {
  return BACKEND_CODES.find((c) => c.code === code);
}
