// Diagnostic codes of the schema stage (RT2xxx): the JSON Schema of each kind.
import type { CodeInfo } from '../code-info.js';

export const SCHEMA_CODES = [
  {
    code: 'RT2001',
    severity: 'error',
    name: 'wrong-type',
    summary: 'A field has the wrong type (for example a string where an integer is expected).',
  },
  { code: 'RT2002', severity: 'error', name: 'missing-field', summary: 'A required field is missing.' },
  {
    code: 'RT2003',
    severity: 'error',
    name: 'unknown-field',
    summary: 'A field is not part of the schema (often a typo); the API server would drop it silently.',
  },
  {
    code: 'RT2004',
    severity: 'error',
    name: 'not-allowed-value',
    summary: 'A field has a value outside its allowed set.',
  },
  {
    code: 'RT2005',
    severity: 'error',
    name: 'pattern-mismatch',
    summary: 'A string does not have the required form.',
  },
  {
    code: 'RT2006',
    severity: 'error',
    name: 'out-of-range',
    summary: 'A number is outside its bounds (severity is 1 to 10).',
  },
  {
    code: 'RT2007',
    severity: 'error',
    name: 'bad-length',
    summary:
      'A string or list is too long or too short (paths at most 200 characters, allowedArgs at most 20).',
  },
  {
    code: 'RT2008',
    severity: 'error',
    name: 'missing-selector',
    summary:
      'A RuntimePolicy has no spec.selector; write matchLabels: {} to select every pod of the namespace.',
  },
  {
    code: 'RT2009',
    severity: 'error',
    name: 'missing-node-selector',
    summary: 'A RuntimeHostPolicy has no spec.nodeSelector; host policies select nodes by label.',
  },
  {
    code: 'RT2010',
    severity: 'error',
    name: 'wrong-api-version',
    summary: 'The apiVersion is not security.runtime.com/v1.',
  },
  {
    code: 'RT2011',
    severity: 'error',
    name: 'unknown-protocol',
    summary:
      'A network protocol is not one of tcp, udp, icmp, icmpv6, raw, sctp, stream, dgram, rdm, seqpacket, dccp, packet, all.',
  },
  {
    code: 'RT2012',
    severity: 'error',
    name: 'unknown-capability',
    summary: 'A capability is not a Linux capability name in lower case without the cap_ prefix.',
  },
  {
    code: 'RT2013',
    severity: 'error',
    name: 'one-of',
    summary: 'A rule must have exactly one of two fields (path or execname; path or dir).',
  },
] as const satisfies readonly CodeInfo[];
