// Table-driven tests of the decision oracle: every rule of the seed's "Rules", "States and
// transitions" and "Errors" sections, and every precedence and posture case of docs/semantics.md.
import assert from 'node:assert/strict';
import { decideOperation } from '../../../compiler/decide/decide.js';
import { lintTexts } from '../../../compiler/lint.js';
import type { OperationRequest, Postures, Workload } from '../../../compiler/decide/decision-input.js';
import type { RuleSet } from '../../../compiler/ir/rule-set.js';
import {
  Action,
  Operation,
  capability,
  dir,
  execname,
  makeHostPolicy,
  makePodPolicy,
  path,
  pattern,
  protocol,
  srcDir,
  srcPath,
} from './rule-set-builder.js';

const pod: Workload = { kind: 'container', namespace: 'default', labels: { app: 'web' }, nodeLabels: {} };
const host: Workload = {
  kind: 'host',
  namespace: '',
  labels: {},
  nodeLabels: { 'kubernetes.io/hostname': 'node-1', zone: 'a' },
};

function exec(resource: string, parentExecutable = '/bin/bash'): OperationRequest {
  return { operation: Operation.Process, resource, parentExecutable, write: false, owner: false };
}
function open(
  resource: string,
  opts: { write?: boolean; owner?: boolean; by?: string } = {},
): OperationRequest {
  return {
    operation: Operation.File,
    resource,
    executable: opts.by ?? '/bin/cat',
    write: opts.write ?? false,
    owner: opts.owner ?? false,
  };
}
function connect(proto: string, by = '/usr/bin/curl'): OperationRequest {
  return { operation: Operation.Network, resource: proto, executable: by, write: false, owner: false };
}
function capable(cap: string, by = '/bin/ping'): OperationRequest {
  return { operation: Operation.Capabilities, resource: cap, executable: by, write: false, owner: false };
}

/** What a case expects: allowed, the alert's policy/action (or null), and the deciding rule's line. */
interface Expect {
  allowed: boolean;
  alert: { policy: string; action: 'Block' | 'Audit' } | null;
  line?: number | null;
}

interface Case {
  name: string;
  ruleSet: RuleSet;
  workload?: Workload;
  operation: OperationRequest;
  postures?: Postures;
  expect: Expect;
}

const blocked = (policy: string, line?: number): Expect => ({
  allowed: false,
  alert: { policy, action: 'Block' },
  ...(line === undefined ? {} : { line }),
});
const audited = (policy: string, line?: number): Expect => ({
  allowed: true,
  alert: { policy, action: 'Audit' },
  ...(line === undefined ? {} : { line }),
});
const allowedSilently = (line?: number | null): Expect => ({
  allowed: true,
  alert: null,
  ...(line === undefined ? {} : { line }),
});
const posture = (action: 'Block' | 'Audit'): Expect => ({
  allowed: action === 'Audit',
  alert: { policy: 'DefaultPosture', action },
  line: null,
});

const rs = (...policies: RuleSet['policies']): RuleSet => ({ policies });
const P = Operation.Process;

const cases: Case[] = [
  // Seed "Rules" 1: Block denies and alerts (process and file).
  {
    name: 'rule 1: Block on a process path denies the exec with an alert',
    ruleSet: rs(
      makePodPolicy('block-sleep', [
        { operation: P, matcher: path('/bin/sleep'), action: Action.Block, line: 10 },
      ]),
    ),
    operation: exec('/bin/sleep'),
    expect: blocked('block-sleep', 10),
  },
  {
    name: 'rule 1: Block on a file directory denies a read in it',
    ruleSet: rs(makePodPolicy('block-etc', [{ matcher: dir('/etc/'), action: Action.Block, line: 11 }])),
    operation: open('/etc/passwd'),
    expect: blocked('block-etc', 11),
  },
  {
    name: 'rule 1: an operation that matches nothing in a Block policy passes silently',
    ruleSet: rs(
      makePodPolicy('block-sleep', [{ operation: P, matcher: path('/bin/sleep'), action: Action.Block }]),
    ),
    operation: exec('/bin/ls'),
    expect: allowedSilently(null),
  },
  // Seed "Rules" 2: Audit.
  {
    name: 'rule 2: Audit on a file path lets the read through with an Audit alert',
    ruleSet: rs(
      makePodPolicy('audit-passwd', [{ matcher: path('/etc/passwd'), action: Action.Audit, line: 12 }]),
    ),
    operation: open('/etc/passwd'),
    expect: audited('audit-passwd', 12),
  },
  {
    name: 'rule 2: Audit on a process path lets the exec through with an Audit alert',
    ruleSet: rs(
      makePodPolicy('audit-apt', [{ operation: P, matcher: path('/usr/bin/apt'), action: Action.Audit }]),
    ),
    operation: exec('/usr/bin/apt'),
    expect: audited('audit-apt'),
  },
  // Seed "Rules" 3: Allow lists, least-permissive mode.
  {
    name: 'rule 3: Allow lets a listed process run with no alert',
    ruleSet: rs(
      makePodPolicy('allow-nginx', [
        { operation: P, matcher: path('/usr/sbin/nginx'), action: Action.Allow, line: 13 },
      ]),
    ),
    operation: exec('/usr/sbin/nginx'),
    expect: allowedSilently(13),
  },
  {
    name: 'rule 3: Allow puts the pod in least-permissive mode: an unlisted exec follows the (audit) posture',
    ruleSet: rs(
      makePodPolicy('allow-nginx', [
        { operation: P, matcher: path('/usr/sbin/nginx'), action: Action.Allow },
      ]),
    ),
    operation: exec('/bin/sh'),
    expect: posture('Audit'),
  },
  {
    name: 'rule 3: an Allow list of one class leaves other classes alone (network traffic keeps working)',
    ruleSet: rs(
      makePodPolicy('allow-nginx', [
        { operation: P, matcher: path('/usr/sbin/nginx'), action: Action.Allow },
      ]),
    ),
    operation: connect('tcp'),
    postures: { file: 'block', network: 'audit' },
    expect: allowedSilently(null),
  },
  // Seed "Rules" 4: matching forms.
  {
    name: 'rule 4: matchPaths is exact: a longer path with the same prefix does not match',
    ruleSet: rs(
      makePodPolicy('block-sh', [{ operation: P, matcher: path('/bin/sh'), action: Action.Block }]),
    ),
    operation: exec('/bin/sh2'),
    expect: allowedSilently(null),
  },
  {
    name: 'rule 4: non-recursive matchDirectories does not cover subdirectories',
    ruleSet: rs(makePodPolicy('block-etc', [{ matcher: dir('/etc/'), action: Action.Block }])),
    operation: open('/etc/ssl/private/key.pem'),
    expect: allowedSilently(null),
  },
  {
    name: 'rule 4: recursive matchDirectories covers subdirectories',
    ruleSet: rs(makePodPolicy('block-etc', [{ matcher: dir('/etc/', true), action: Action.Block }])),
    operation: open('/etc/ssl/private/key.pem'),
    expect: blocked('block-etc'),
  },
  {
    name: 'rule 4: a directory rule does not match the directory path itself or a sibling with the same prefix',
    ruleSet: rs(makePodPolicy('block-etc', [{ matcher: dir('/etc/', true), action: Action.Block }])),
    operation: open('/etcetera/x'),
    expect: allowedSilently(null),
  },
  {
    name: 'rule 4: a process directory rule matches binaries in it',
    ruleSet: rs(
      makePodPolicy('block-sbin', [{ operation: P, matcher: dir('/sbin/'), action: Action.Block }]),
    ),
    operation: exec('/sbin/reboot'),
    expect: blocked('block-sbin'),
  },
  // States and transitions.
  {
    name: 'state: without an Allow policy the pod is not least-permissive; unlisted files pass silently',
    ruleSet: rs(makePodPolicy('audit-passwd', [{ matcher: path('/etc/passwd'), action: Action.Audit }])),
    operation: open('/etc/hosts'),
    postures: { file: 'block' },
    expect: allowedSilently(null),
  },
  {
    name: 'state: file posture unset (audit): a file outside the allow list is allowed with a DefaultPosture Audit alert',
    ruleSet: rs(makePodPolicy('allow-app', [{ matcher: dir('/app/', true), action: Action.Allow }])),
    operation: open('/etc/shadow'),
    expect: posture('Audit'),
  },
  {
    name: 'state: file posture block: a file outside the allow list is denied with a DefaultPosture Block alert',
    ruleSet: rs(makePodPolicy('allow-app', [{ matcher: dir('/app/', true), action: Action.Allow }])),
    operation: open('/etc/shadow'),
    postures: { file: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'state: file posture block: a file inside the allow list is allowed',
    ruleSet: rs(
      makePodPolicy('allow-app', [{ matcher: dir('/app/', true), action: Action.Allow, line: 14 }]),
    ),
    operation: open('/app/static/index.html'),
    postures: { file: 'block' },
    expect: allowedSilently(14),
  },
  {
    name: 'state: a policy selecting other pods does not put this pod in least-permissive mode',
    ruleSet: rs(
      makePodPolicy('allow-db', [{ matcher: dir('/data/', true), action: Action.Allow }], {
        labels: { app: 'db' },
      }),
    ),
    operation: open('/etc/shadow'),
    postures: { file: 'block' },
    expect: allowedSilently(null),
  },
  // Errors.
  {
    name: 'error: a blocked process is denied (Permission denied; the shell exits 126)',
    ruleSet: rs(
      makePodPolicy('block-apt', [{ operation: P, matcher: path('/usr/bin/apt'), action: Action.Block }]),
    ),
    operation: exec('/usr/bin/apt'),
    expect: blocked('block-apt'),
  },
  {
    name: 'error: a blocked file read is denied',
    ruleSet: rs(makePodPolicy('block-shadow', [{ matcher: path('/etc/shadow'), action: Action.Block }])),
    operation: open('/etc/shadow'),
    expect: blocked('block-shadow'),
  },
  {
    name: 'error: a binary outside the allow list in least-permissive mode with block posture is denied',
    ruleSet: rs(
      makePodPolicy('allow-nginx', [
        { operation: P, matcher: path('/usr/sbin/nginx'), action: Action.Allow },
      ]),
    ),
    operation: exec('/bin/bash'),
    postures: { file: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'authentication: a directory Block on the service-account token directory denies reading the token',
    ruleSet: rs(
      makePodPolicy('block-sa', [
        { matcher: dir('/run/secrets/kubernetes.io/serviceaccount/', true), action: Action.Block },
      ]),
    ),
    operation: open('/run/secrets/kubernetes.io/serviceaccount/token'),
    expect: blocked('block-sa'),
  },
  {
    name: 'rule 4: paths are compared in normal form (`..`, `.`, repeated and trailing `/`)',
    ruleSet: rs(makePodPolicy('block-shadow', [{ matcher: path('/etc/shadow'), action: Action.Block }])),
    operation: open('/tmp/..//etc/./shadow/'),
    expect: blocked('block-shadow'),
  },
  // Precedence: specificity tiers.
  {
    name: 'precedence: exact path with source beats exact path (source matches)',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: path('/etc/app.conf'), action: Action.Block, line: 20 },
        {
          matcher: path('/etc/app.conf'),
          action: Action.Allow,
          fromSource: [srcPath('/app/bin/server')],
          line: 21,
        },
      ]),
    ),
    operation: open('/etc/app.conf', { by: '/app/bin/server' }),
    expect: allowedSilently(21),
  },
  {
    name: 'precedence: exact path with source does not apply to another source; the exact path decides',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: path('/etc/app.conf'), action: Action.Block, line: 20 },
        {
          matcher: path('/etc/app.conf'),
          action: Action.Allow,
          fromSource: [srcPath('/app/bin/server')],
          line: 21,
        },
      ]),
    ),
    operation: open('/etc/app.conf', { by: '/bin/cat' }),
    expect: blocked('p', 20),
  },
  {
    name: 'precedence: exact path beats directory with source',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/etc/'), action: Action.Block, fromSource: [srcPath('/bin/cat')], line: 22 },
        { matcher: path('/etc/hostname'), action: Action.Allow, line: 23 },
      ]),
    ),
    operation: open('/etc/hostname'),
    expect: allowedSilently(23),
  },
  {
    name: 'precedence: directory with source beats directory',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/etc/'), action: Action.Block, line: 24 },
        { matcher: dir('/etc/'), action: Action.Allow, fromSource: [srcDir('/usr/sbin/')], line: 25 },
      ]),
    ),
    operation: open('/etc/nginx.conf', { by: '/usr/sbin/nginx' }),
    expect: allowedSilently(25),
  },
  {
    name: 'precedence: a deeper directory beats a shallower one',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/var/', true), action: Action.Block, line: 26 },
        { matcher: dir('/var/log/', true), action: Action.Allow, line: 27 },
      ]),
    ),
    operation: open('/var/log/app/x.log'),
    expect: allowedSilently(27),
  },
  {
    name: 'precedence: at the same depth a non-recursive directory beats a recursive one',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/srv/', true), action: Action.Block, line: 28 },
        { matcher: dir('/srv/', false), action: Action.Audit, line: 29 },
      ]),
    ),
    operation: open('/srv/index.html'),
    expect: audited('p', 29),
  },
  {
    name: 'precedence: a directory beats a pattern',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: pattern('/home/*/secret*'), action: Action.Block, line: 30 },
        { matcher: dir('/home/alice/'), action: Action.Audit, line: 31 },
      ]),
    ),
    operation: open('/home/alice/secret.txt'),
    expect: audited('p', 31),
  },
  {
    name: 'precedence: exact path beats execname',
    ruleSet: rs(
      makePodPolicy('p', [
        { operation: P, matcher: execname('python3'), action: Action.Block, line: 32 },
        { operation: P, matcher: path('/usr/bin/python3'), action: Action.Allow, line: 33 },
      ]),
    ),
    operation: exec('/usr/bin/python3'),
    expect: allowedSilently(33),
  },
  {
    name: 'precedence: execname beats a process directory',
    ruleSet: rs(
      makePodPolicy('p', [
        { operation: P, matcher: dir('/usr/bin/'), action: Action.Allow, line: 34 },
        { operation: P, matcher: execname('apt'), action: Action.Block, line: 35 },
      ]),
    ),
    operation: exec('/usr/bin/apt'),
    expect: blocked('p', 35),
  },
  // Precedence: equal specificity, Block > Audit > Allow, across policies.
  {
    name: 'precedence: same path in two policies, Block beats Allow',
    ruleSet: rs(
      makePodPolicy('a-allow', [{ matcher: path('/etc/shadow'), action: Action.Allow }]),
      makePodPolicy('z-block', [{ matcher: path('/etc/shadow'), action: Action.Block }]),
    ),
    operation: open('/etc/shadow'),
    expect: blocked('z-block'),
  },
  {
    name: 'precedence: same path, Block beats Audit',
    ruleSet: rs(
      makePodPolicy('a-audit', [{ matcher: path('/etc/shadow'), action: Action.Audit }]),
      makePodPolicy('b-block', [{ matcher: path('/etc/shadow'), action: Action.Block }]),
    ),
    operation: open('/etc/shadow'),
    expect: blocked('b-block'),
  },
  {
    name: 'precedence: same path, Audit beats Allow',
    ruleSet: rs(
      makePodPolicy('a-allow', [{ matcher: path('/etc/shadow'), action: Action.Allow }]),
      makePodPolicy('b-audit', [{ matcher: path('/etc/shadow'), action: Action.Audit }]),
    ),
    operation: open('/etc/shadow'),
    expect: audited('b-audit'),
  },
  {
    name: 'precedence: same pattern tier, Block beats Allow regardless of the patterns',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: pattern('/tmp/**/*.sh'), action: Action.Allow },
        { matcher: pattern('/tmp/*'), action: Action.Block, line: 40 },
      ]),
    ),
    operation: open('/tmp/run.sh'),
    expect: blocked('p', 40),
  },
  // fromSource: which executable is compared.
  {
    name: 'fromSource on Process compares the parent executable',
    ruleSet: rs(
      makePodPolicy('p', [
        {
          operation: P,
          matcher: path('/bin/sleep'),
          action: Action.Block,
          fromSource: [srcPath('/bin/bash')],
        },
      ]),
    ),
    operation: exec('/bin/sleep', '/bin/bash'),
    expect: blocked('p'),
  },
  {
    name: 'fromSource on Process: another parent does not match',
    ruleSet: rs(
      makePodPolicy('p', [
        {
          operation: P,
          matcher: path('/bin/sleep'),
          action: Action.Block,
          fromSource: [srcPath('/bin/bash')],
        },
      ]),
    ),
    operation: exec('/bin/sleep', '/bin/dash'),
    expect: allowedSilently(null),
  },
  {
    name: 'fromSource on File compares the acting executable; a recursive source directory covers subdirectories',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/secret/'), action: Action.Block, fromSource: [srcDir('/usr/', true)] },
      ]),
    ),
    operation: open('/secret/key', { by: '/usr/local/bin/tool' }),
    expect: blocked('p'),
  },
  {
    name: 'fromSource: an unknown acting executable never matches a sourced rule',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/secret/'), action: Action.Block, fromSource: [srcDir('/usr/', true)] },
      ]),
    ),
    operation: { operation: Operation.File, resource: '/secret/key', write: false, owner: false },
    expect: allowedSilently(null),
  },
  // readOnly / ownerOnly.
  {
    name: 'readOnly Block: a read passes without alert',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/etc/hosts'), action: Action.Block, readOnly: true }])),
    operation: open('/etc/hosts'),
    expect: allowedSilently(null),
  },
  {
    name: 'readOnly Block: a write is denied',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/etc/hosts'), action: Action.Block, readOnly: true }])),
    operation: open('/etc/hosts', { write: true }),
    expect: blocked('p'),
  },
  {
    name: 'readOnly Audit: a write is audited',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/etc/hosts'), action: Action.Audit, readOnly: true }])),
    operation: open('/etc/hosts', { write: true }),
    expect: audited('p'),
  },
  {
    name: 'readOnly Allow: a read is allowed',
    ruleSet: rs(makePodPolicy('p', [{ matcher: dir('/data/', true), action: Action.Allow, readOnly: true }])),
    operation: open('/data/x'),
    postures: { file: 'block' },
    expect: allowedSilently(),
  },
  {
    name: 'readOnly Allow: a write falls to the posture',
    ruleSet: rs(makePodPolicy('p', [{ matcher: dir('/data/', true), action: Action.Allow, readOnly: true }])),
    operation: open('/data/x', { write: true }),
    postures: { file: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'ownerOnly Block: the owner passes',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/home/u/f'), action: Action.Block, ownerOnly: true }])),
    operation: open('/home/u/f', { owner: true, write: true }),
    expect: allowedSilently(null),
  },
  {
    name: 'ownerOnly Block: another user is denied',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/home/u/f'), action: Action.Block, ownerOnly: true }])),
    operation: open('/home/u/f'),
    expect: blocked('p'),
  },
  {
    name: 'ownerOnly Allow: another user falls to the posture',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/home/u/f'), action: Action.Allow, ownerOnly: true }])),
    operation: open('/home/u/f'),
    expect: posture('Audit'),
  },
  {
    name: 'ownerOnly Allow: the owner is allowed',
    ruleSet: rs(makePodPolicy('p', [{ matcher: path('/home/u/f'), action: Action.Allow, ownerOnly: true }])),
    operation: open('/home/u/f', { owner: true }),
    expect: allowedSilently(),
  },
  {
    name: 'ownerOnly + readOnly Block: the owner reading passes',
    ruleSet: rs(
      makePodPolicy('p', [
        {
          matcher: pattern('/home/user1/secret_data*'),
          action: Action.Block,
          ownerOnly: true,
          readOnly: true,
        },
      ]),
    ),
    operation: open('/home/user1/secret_data1.txt', { owner: true }),
    expect: allowedSilently(null),
  },
  {
    name: 'ownerOnly + readOnly Block: the owner writing is denied',
    ruleSet: rs(
      makePodPolicy('p', [
        {
          matcher: pattern('/home/user1/secret_data*'),
          action: Action.Block,
          ownerOnly: true,
          readOnly: true,
        },
      ]),
    ),
    operation: open('/home/user1/secret_data1.txt', { owner: true, write: true }),
    expect: blocked('p'),
  },
  {
    name: 'ownerOnly + readOnly Block: another user reading is denied',
    ruleSet: rs(
      makePodPolicy('p', [
        {
          matcher: pattern('/home/user1/secret_data*'),
          action: Action.Block,
          ownerOnly: true,
          readOnly: true,
        },
      ]),
    ),
    operation: open('/home/user1/secret_data1.txt'),
    expect: blocked('p'),
  },
  {
    name: 'ownerOnly on a process rule: the binary owner passes a Block',
    ruleSet: rs(
      makePodPolicy('p', [
        { operation: P, matcher: path('/home/user1/hello'), action: Action.Block, ownerOnly: true },
      ]),
    ),
    operation: { ...exec('/home/user1/hello'), owner: true },
    expect: allowedSilently(null),
  },
  // Patterns.
  {
    name: 'pattern: `*` stays within one segment',
    ruleSet: rs(makePodPolicy('p', [{ matcher: pattern('/etc/*.conf'), action: Action.Block }])),
    operation: open('/etc/sub/x.conf'),
    expect: allowedSilently(null),
  },
  {
    name: 'pattern: `**` crosses segments',
    ruleSet: rs(makePodPolicy('p', [{ matcher: pattern('/etc/**.conf'), action: Action.Block }])),
    operation: open('/etc/sub/x.conf'),
    expect: blocked('p'),
  },
  {
    name: 'pattern: `?` is one character',
    ruleSet: rs(makePodPolicy('p', [{ matcher: pattern('/tmp/?.sh'), action: Action.Block }])),
    operation: open('/tmp/ab.sh'),
    expect: allowedSilently(null),
  },
  // Postures per class.
  {
    name: 'posture: Process follows the file posture',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: path('/usr/sbin/nginx'), action: Action.Allow }]),
    ),
    operation: exec('/bin/sh'),
    postures: { file: 'block', network: 'audit', capabilities: 'audit' },
    expect: posture('Block'),
  },
  {
    name: 'posture: the network posture applies to Network least-permissive mode',
    ruleSet: rs(makePodPolicy('p', [{ matcher: protocol('tcp'), action: Action.Allow }])),
    operation: connect('udp'),
    postures: { file: 'audit', network: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'posture: the file posture does not apply to Network',
    ruleSet: rs(makePodPolicy('p', [{ matcher: protocol('tcp'), action: Action.Allow }])),
    operation: connect('udp'),
    postures: { file: 'block' },
    expect: posture('Audit'),
  },
  {
    name: 'posture: the capabilities posture applies to Capabilities',
    ruleSet: rs(makePodPolicy('p', [{ matcher: capability('net_bind_service'), action: Action.Allow }])),
    operation: capable('net_raw'),
    postures: { capabilities: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'posture: an Allow with fromSource makes only that source least-permissive (other programs pass)',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/etc/default/', true), action: Action.Allow, fromSource: [srcPath('/usr/bin/head')] },
      ]),
    ),
    operation: open('/etc/hostname', { by: '/bin/cat' }),
    postures: { file: 'block' },
    expect: allowedSilently(null),
  },
  {
    name: 'posture: an Allow with fromSource makes that source least-permissive',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: dir('/etc/default/', true), action: Action.Allow, fromSource: [srcPath('/usr/bin/head')] },
      ]),
    ),
    operation: open('/etc/hostname', { by: '/usr/bin/head' }),
    postures: { file: 'block' },
    expect: posture('Block'),
  },
  // Network and capabilities matching.
  {
    name: 'network: Block all protocols',
    ruleSet: rs(makePodPolicy('p', [{ matcher: protocol('all'), action: Action.Block }])),
    operation: connect('icmp'),
    expect: blocked('p'),
  },
  {
    name: 'network: a specific protocol beats all',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: protocol('all'), action: Action.Block },
        { matcher: protocol('tcp'), action: Action.Allow, line: 50 },
      ]),
    ),
    operation: connect('tcp'),
    expect: allowedSilently(50),
  },
  {
    name: 'network: Allow tcp from one source; that source connecting with udp follows the posture',
    ruleSet: rs(
      makePodPolicy('p', [
        { matcher: protocol('tcp'), action: Action.Allow, fromSource: [srcPath('/usr/bin/curl')] },
      ]),
    ),
    operation: connect('udp'),
    postures: { network: 'block' },
    expect: posture('Block'),
  },
  {
    name: 'capabilities: Block net_raw (the cap_ prefix and case do not matter)',
    ruleSet: rs(makePodPolicy('p', [{ matcher: capability('net_raw'), action: Action.Block }])),
    operation: capable('CAP_NET_RAW'),
    expect: blocked('p'),
  },
  // Host policies and selectors.
  {
    name: 'host: a host policy selects the node by labels',
    ruleSet: rs(
      makeHostPolicy('h', [{ operation: P, matcher: path('/usr/bin/wget'), action: Action.Block }], {
        'kubernetes.io/hostname': 'node-1',
      }),
    ),
    workload: host,
    operation: exec('/usr/bin/wget'),
    expect: blocked('h'),
  },
  {
    name: 'host: `*` matches any value of a node label',
    ruleSet: rs(
      makeHostPolicy('h', [{ operation: P, matcher: path('/usr/bin/wget'), action: Action.Block }], {
        zone: '*',
      }),
    ),
    workload: host,
    operation: exec('/usr/bin/wget'),
    expect: blocked('h'),
  },
  {
    name: 'host: a node without the label is not selected',
    ruleSet: rs(
      makeHostPolicy('h', [{ operation: P, matcher: path('/usr/bin/wget'), action: Action.Block }], {
        'kubernetes.io/hostname': 'node-2',
      }),
    ),
    workload: host,
    operation: exec('/usr/bin/wget'),
    expect: allowedSilently(null),
  },
  {
    name: 'host: host policies do not apply to containers',
    ruleSet: rs(
      makeHostPolicy('h', [{ operation: P, matcher: path('/usr/bin/wget'), action: Action.Block }]),
    ),
    operation: exec('/usr/bin/wget'),
    expect: allowedSilently(null),
  },
  {
    name: 'host: pod policies do not apply to the host',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: path('/usr/bin/wget'), action: Action.Block }], {
        labels: {},
      }),
    ),
    workload: host,
    operation: exec('/usr/bin/wget'),
    expect: allowedSilently(null),
  },
  {
    name: 'selector: a pod policy of another namespace does not apply',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: path('/bin/sh'), action: Action.Block }], {
        namespace: 'other',
      }),
    ),
    operation: exec('/bin/sh'),
    expect: allowedSilently(null),
  },
  {
    name: 'selector: matchExpressions In and NotIn',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: execname('apt'), action: Action.Block }], {
        labels: {},
        expressions: [
          { operator: 'In', values: ['app=web'] },
          { operator: 'NotIn', values: ['tier=db'] },
        ],
      }),
    ),
    operation: exec('/usr/bin/apt'),
    expect: blocked('p'),
  },
  {
    name: 'selector: NotIn excludes a pod carrying the label',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: execname('apt'), action: Action.Block }], {
        labels: {},
        expressions: [{ operator: 'NotIn', values: ['app=web'] }],
      }),
    ),
    operation: exec('/usr/bin/apt'),
    expect: allowedSilently(null),
  },
  // pts and allowedArgs.
  {
    name: 'pts: a pts rule matches only processes with a terminal',
    ruleSet: rs(
      makePodPolicy('p', [{ operation: P, matcher: path('/bin/sh'), action: Action.Block, pts: true }]),
    ),
    operation: exec('/bin/sh'),
    expect: allowedSilently(null),
  },
  {
    name: 'allowedArgs: an Allow rule allows only the listed arguments',
    ruleSet: rs(
      makePodPolicy('p', [
        { operation: P, matcher: path('/usr/bin/python3'), action: Action.Allow, allowedArgs: ['-V'] },
      ]),
    ),
    operation: { ...exec('/usr/bin/python3'), args: ['-c', 'import os'] },
    postures: { file: 'block' },
    expect: posture('Block'),
  },
];

describe('decision oracle', () => {
  for (const c of cases) {
    it(c.name, () => {
      const d = decideOperation(c.ruleSet, c.workload ?? pod, c.operation, c.postures ?? {});
      assert.equal(d.allowed, c.expect.allowed, 'allowed');
      if (c.expect.alert === null) assert.equal(d.alert, null, 'no alert');
      else {
        assert.ok(d.alert, 'an alert');
        assert.equal(d.alert.PolicyName, c.expect.alert.policy);
        assert.equal(d.alert.Action, c.expect.alert.action);
        assert.equal(d.alert.Result, c.expect.alert.action === 'Block' ? 'Permission denied' : 'Passed');
      }
      assert.equal(d.errno, d.allowed ? undefined : 'EACCES');
      if (c.expect.line === null) assert.equal(d.rule, null, 'no deciding rule');
      else if (c.expect.line !== undefined) assert.equal(d.rule?.line, c.expect.line, 'deciding rule line');
    });
  }

  it('alerts carry the rule severity, tags, message, operation and type', () => {
    const ruleSet = rs(
      makeHostPolicy('h', [
        {
          matcher: path('/etc/shadow'),
          action: Action.Audit,
          severity: 7,
          tags: ['CIS', 'NIST'],
          message: 'shadow read',
        },
      ]),
    );
    const d = decideOperation(ruleSet, host, open('/etc/shadow'));
    assert.deepEqual(d.alert, {
      PolicyName: 'h',
      Type: 'MatchedHostPolicy',
      Operation: 'File',
      Action: 'Audit',
      Result: 'Passed',
      Severity: '7',
      Tags: 'CIS,NIST',
      Message: 'shadow read',
    });
    assert.equal(d.rule?.file, 'h.yaml');
  });

  it('a posture decision names the Allow rule that made the workload least-permissive', () => {
    const ruleSet = rs(
      makePodPolicy('allow-app', [{ matcher: dir('/app/', true), action: Action.Allow, line: 77 }]),
    );
    const d = decideOperation(ruleSet, pod, open('/etc/shadow'), { file: 'block' });
    assert.equal(d.basis, 'posture');
    assert.equal(d.leastPermissiveBy?.line, 77);
    assert.equal(d.alert?.Type, 'MatchedPolicy');
  });
});

describe('decision oracle: pts: false, read as the reference reads it (a terminal rule)', () => {
  const text = [
    'apiVersion: security.runtime.com/v1',
    'kind: RuntimePolicy',
    'metadata: {name: block-sleep-pts, namespace: default}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  process:',
    '    matchPaths:',
    '      - path: /bin/sleep',
    '        pts: false',
    '  action: Block',
    '',
  ].join('\n');
  const lint = lintTexts([{ file: 'pts.yaml', text }]);
  const request: OperationRequest = {
    operation: 'Process',
    resource: '/bin/sleep',
    parentExecutable: '/bin/sh',
    write: false,
    owner: true,
  };

  it('lint warns RT3025 at the pts key', () => {
    const d = lint.diagnostics.filter((x) => x.code === 'RT3025');
    assert.equal(d.length, 1, JSON.stringify(lint.diagnostics));
    assert.equal(d[0]?.severity, 'warning');
  });

  it('a process without a terminal is left alone, without an alert', () => {
    const d = decideOperation(lint.ruleSet, pod, { ...request, tty: false }, {});
    assert.equal(d.allowed, true);
    assert.equal(d.alert, null);
  });

  it('a process with a terminal is blocked by the rule', () => {
    const d = decideOperation(lint.ruleSet, pod, { ...request, tty: true }, {});
    assert.equal(d.allowed, false);
    assert.equal(d.alert?.PolicyName, 'block-sleep-pts');
  });
});
