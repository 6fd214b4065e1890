// Diagnostic codes of the parse stage (RT1xxx): reading bytes and YAML.
import type { CodeInfo } from '../code-info.js';

export const PARSE_CODES = [
  {
    code: 'RT1001',
    severity: 'error',
    name: 'yaml-syntax',
    summary: 'The text is not valid YAML; fix the syntax at the position shown.',
  },
  {
    code: 'RT1002',
    severity: 'error',
    name: 'duplicate-key',
    summary:
      'A mapping has the same key twice; the API server would keep only one, so remove or rename the other.',
  },
  {
    code: 'RT1003',
    severity: 'error',
    name: 'tab-indentation',
    summary: 'A tab is used for indentation; YAML allows only spaces there.',
  },
  {
    code: 'RT1004',
    severity: 'warning',
    name: 'alias-used',
    summary: 'An anchor alias (*name) is used; it is expanded, but it hides what a rule says from reviewers.',
  },
  {
    code: 'RT1005',
    severity: 'error',
    name: 'alias-expansion-limit',
    summary: 'Aliases expand beyond the limit (a YAML bomb); the document is not read.',
  },
  {
    code: 'RT1006',
    severity: 'error',
    name: 'file-too-large',
    summary: 'The file exceeds the size limit (--max-file-size); it is not read.',
  },
  {
    code: 'RT1007',
    severity: 'error',
    name: 'nesting-too-deep',
    summary: 'Collections are nested deeper than the limit; no policy needs that depth.',
  },
  {
    code: 'RT1008',
    severity: 'error',
    name: 'not-utf8',
    summary: 'The file is not valid UTF-8 text (or carries a UTF-16/32 byte-order mark); save it as UTF-8.',
  },
  {
    code: 'RT1009',
    severity: 'error',
    name: 'not-a-mapping',
    summary: 'A YAML document must be a mapping (a Kubernetes object), not a list or a scalar.',
  },
  {
    code: 'RT1010',
    severity: 'error',
    name: 'missing-type-fields',
    summary: 'The object has no string apiVersion or kind, so nobody can tell what it is.',
  },
  {
    code: 'RT1011',
    severity: 'info',
    name: 'unknown-kind',
    summary: 'The object is of a kind rtctl does not check; it is passed over (shown with --verbose).',
  },
  {
    code: 'RT1012',
    severity: 'error',
    name: 'read-failed',
    summary: 'The file or directory could not be read (missing, unreadable, not a file).',
  },
  {
    code: 'RT1013',
    severity: 'error',
    name: 'no-policy-files',
    summary:
      'A path given on the command line holds no policy document that can be read (no .yaml or .yml file, or only empty ones); nothing was checked, so nothing passed.',
  },
] as const satisfies readonly CodeInfo[];
