// Lowers one validated policy document into the IR: every rule gets its resolved action, severity, tags and
// message (rule, then section, then spec), matchers and sources are normalized, and each rule records where it
// is written. Pure: positions come from the `locate` function the caller passes.
import type {
  Action,
  DeviceRule,
  DnsQueryRule,
  LabelExpression,
  Matcher,
  Operation,
  PolicyIR,
  PresetRule,
  Rule,
  SourceLocation,
  SourceMatcher,
  SyscallRule,
  Target,
} from '../ir/rule-set.js';
import type { PolicyDocument } from '../model/policy-document.js';
import { parseCidr } from '../net/cidr.js';

/** Resolves a JSON pointer of the document to its 1-based line and column. */
export type LocateFn = (pointer: string) => { line: number; column: number };

/**
 * The empty lists of the IR, one of each shared by every rule and policy that has nothing there: a compile
 * lowers tens of thousands of rules, most without tags, arguments or sources, and every list it keeps is
 * moved by the garbage collector. Frozen: the IR is read, never changed in place (a change would throw).
 */
function emptyList<T>(): T[] {
  return Object.freeze([]) as unknown as T[];
}
const NO_STRINGS = emptyList<string>();
const NO_SOURCES = emptyList<SourceMatcher>();
const NO_SYSCALL_RULES = emptyList<SyscallRule>();
const NO_PRESETS = emptyList<PresetRule>();
const NO_DNS_QUERY_RULES = emptyList<DnsQueryRule>();
const NO_DEVICE_RULES = emptyList<DeviceRule>();
const NO_LABEL_EXPRESSIONS = emptyList<LabelExpression>();

/**
 * `list` at its length: a list grown by push keeps room for 16 more entries, which the garbage collector would
 * move with every lowered policy it keeps; the copy is exact, and the grown list dies young (cheap).
 */
function tight<T>(list: T[]): T[] {
  return list.length === 0 ? list : list.slice();
}

/** A copy of a list of strings (the shared empty one when there are none). */
function copyStrings(list: readonly string[] | undefined): string[] {
  return list === undefined || list.length === 0 ? NO_STRINGS : [...list];
}

/** Default severity of a rule that states none at any level. */
export const DEFAULT_SEVERITY = 1;
/** Namespace assumed for a RuntimePolicy written without one (what kubectl would use in a default context). */
export const DEFAULT_NAMESPACE = 'default';

/** The fields any level may carry and rules inherit. */
interface Inherited {
  action?: string;
  severity?: number;
  tags?: readonly string[];
  message?: string;
}

interface RawSource {
  path?: string;
  dir?: string;
  recursive?: boolean;
}

interface RawRule extends Inherited {
  path?: string;
  execname?: string;
  dir?: string;
  recursive?: boolean;
  pattern?: string;
  protocol?: string;
  capability?: string;
  cidr?: string;
  ports?: readonly number[];
  readOnly?: boolean;
  ownerOnly?: boolean;
  pts?: boolean;
  allowedArgs?: readonly string[];
  /** `null` or `[]` (an empty `fromSource:`) means no source restriction, as if absent (RT3017 warns). */
  fromSource?: readonly RawSource[] | null;
}

interface RawSection extends Inherited {
  matchPaths?: readonly RawRule[];
  matchDirectories?: readonly RawRule[];
  matchPatterns?: readonly RawRule[];
  matchProtocols?: readonly RawRule[];
  matchAddresses?: readonly RawRule[];
  matchCapabilities?: readonly RawRule[];
}

interface RawSyscallRule extends Inherited {
  syscall?: readonly string[];
  path?: string;
  recursive?: boolean;
  fromSource?: readonly RawSource[] | null;
}

interface RawSyscalls extends Inherited {
  matchSyscalls?: readonly RawSyscallRule[];
  matchPaths?: readonly RawSyscallRule[];
}

/** A rule-bearing list of a section, with the operation it lowers to and how to read its matcher. */
interface ListSpec {
  section: 'process' | 'file' | 'network' | 'capabilities';
  list: keyof RawSection;
  /** `/spec/<section>/<list>`. */
  pointer: string;
  operation: Operation;
  matcher: (r: RawRule) => Matcher | undefined;
}

/** Every list that lowers to rules, in the order rules are emitted. */
export const RULE_LISTS: readonly ListSpec[] = (
  [
    { section: 'process', list: 'matchPaths', operation: 'Process', matcher: pathOrExecname },
    { section: 'process', list: 'matchDirectories', operation: 'Process', matcher: directory },
    { section: 'process', list: 'matchPatterns', operation: 'Process', matcher: pattern },
    { section: 'file', list: 'matchPaths', operation: 'File', matcher: pathOrExecname },
    { section: 'file', list: 'matchDirectories', operation: 'File', matcher: directory },
    { section: 'file', list: 'matchPatterns', operation: 'File', matcher: pattern },
    {
      section: 'network',
      list: 'matchProtocols',
      operation: 'Network',
      matcher: (r) =>
        r.protocol === undefined ? undefined : { kind: 'protocol', protocol: r.protocol.toLowerCase() },
    },
    { section: 'network', list: 'matchAddresses', operation: 'Network', matcher: address },
    {
      section: 'capabilities',
      list: 'matchCapabilities',
      operation: 'Capabilities',
      matcher: (r) =>
        r.capability === undefined
          ? undefined
          : { kind: 'capability', capability: r.capability.toLowerCase().replace(/^cap_/, '') },
    },
  ] satisfies ReadonlyArray<Omit<ListSpec, 'pointer'>>
).map((ls) => ({ ...ls, pointer: `/spec/${ls.section}/${ls.list}` }));

/** RULE_LISTS by section, in the same order (a policy names few sections: the others are passed over once). */
const RULE_SECTIONS: ReadonlyArray<{ name: string; lists: ListSpec[] }> = RULE_LISTS.reduce<
  Array<{ name: string; lists: ListSpec[] }>
>((sections, ls) => {
  const last = sections[sections.length - 1];
  if (last?.name === ls.section) last.lists.push(ls);
  else sections.push({ name: ls.section, lists: [ls] });
  return sections;
}, []);

/** The lists of the syscalls section, in the order their rules are lowered. */
const SYSCALL_LISTS = ['matchSyscalls', 'matchPaths'] as const;

/** An address rule; a CIDR that does not parse lowers to nothing (lint reports it as RT3019). */
function address(r: RawRule): Matcher | undefined {
  if (r.cidr === undefined) return undefined;
  const block = parseCidr(r.cidr);
  if (!block.ok) return undefined;
  return {
    kind: 'address',
    cidr: block.value.canonical,
    prefix: block.value.prefix,
    ports: [...new Set(r.ports ?? [])].sort((a, b) => a - b),
    protocol: r.protocol?.toLowerCase() ?? '',
  };
}

function pathOrExecname(r: RawRule): Matcher | undefined {
  if (r.path !== undefined) return { kind: 'path', path: r.path };
  if (r.execname !== undefined) return { kind: 'execname', name: r.execname };
  return undefined;
}
function directory(r: RawRule): Matcher | undefined {
  return r.dir === undefined ? undefined : { kind: 'directory', dir: r.dir, recursive: r.recursive === true };
}
function pattern(r: RawRule): Matcher | undefined {
  return r.pattern === undefined ? undefined : { kind: 'pattern', pattern: r.pattern };
}

/** Normalizes a fromSource entry; a directory gets its trailing `/`. */
export function lowerSource(s: RawSource): SourceMatcher | undefined {
  if (s.path !== undefined) return { kind: 'path', path: s.path };
  if (s.dir !== undefined) {
    return {
      kind: 'directory',
      dir: s.dir.endsWith('/') ? s.dir : `${s.dir}/`,
      recursive: s.recursive === true,
    };
  }
  return undefined;
}

function lowerSources(list: readonly RawSource[] | null | undefined): SourceMatcher[] {
  if (list === null || list === undefined || list.length === 0) return NO_SOURCES;
  const out: SourceMatcher[] = [];
  for (const s of list) {
    const source = lowerSource(s);
    if (source !== undefined) out.push(source);
  }
  return out.length === 0 ? NO_SOURCES : tight(out);
}

/** The action a rule resolves to through its section and spec, or undefined when none says one. */
export function resolveAction(
  rule: Inherited | undefined,
  section?: Inherited,
  spec?: Inherited,
): Action | undefined {
  if (rule?.action !== undefined) return rule.action as Action;
  if (section?.action !== undefined) return section.action as Action;
  return spec?.action as Action | undefined;
}

/** What a rule inherits (the first level that says it: rule, then section, then spec), as a rule carries it. */
interface Resolved {
  severity: number;
  tags: string[];
  message: string;
}

function resolveInherited(rule: Inherited | undefined, section?: Inherited, spec?: Inherited): Resolved {
  return {
    severity: rule?.severity ?? section?.severity ?? spec?.severity ?? DEFAULT_SEVERITY,
    tags: copyStrings(rule?.tags ?? section?.tags ?? spec?.tags),
    message: rule?.message ?? section?.message ?? spec?.message ?? '',
  };
}

function labelExpressions(raw: unknown): LabelExpression[] {
  if (!Array.isArray(raw) || raw.length === 0) return NO_LABEL_EXPRESSIONS;
  return raw.map((e: { operator?: string; values?: string[] }) => ({
    operator: e.operator === 'NotIn' ? 'NotIn' : 'In',
    values: [...(e.values ?? [])],
  }));
}

function targetOf(doc: PolicyDocument): Target {
  if (doc.kind === 'RuntimeHostPolicy') {
    return { kind: 'host', nodeLabels: { ...(doc.object.spec.nodeSelector.matchLabels ?? {}) } };
  }
  const sel = doc.object.spec.selector;
  return {
    kind: 'pods',
    namespace: doc.object.metadata.namespace ?? DEFAULT_NAMESPACE,
    matchLabels: { ...(sel.matchLabels ?? {}) },
    matchExpressions: labelExpressions(sel.matchExpressions),
  };
}

/** Lowers one policy document. Rules that resolve to no action are left out (lint reports them as RT3009). */
export function lowerPolicy(doc: PolicyDocument, locate: LocateFn): PolicyIR {
  return lowerWith(doc, { file: doc.file, locate });
}

/** Where the locations of a lowered policy point: its file and how pointers become positions. */
interface Placement {
  file: string;
  locate: LocateFn;
  /** An object without text (admission): locations are plain pointers, line and column 0, fixed at lowering. */
  withoutPositions?: true;
}

/**
 * A policy the checks lowered (they need its rules, not its positions), kept by its object until the
 * lowering stage takes it: the document is then walked once, not twice. Taken at most once.
 */
const keptForLowering = new WeakMap<object, { kind: string; ir: PolicyIR; placement: Placement }>();

/** Positions of an object without text. */
function locateNowhere(): { line: number; column: number } {
  return { line: 0, column: 0 };
}

/** Positions before the lowering stage places the policy (never read: the checks need pointers only). */
function locateFirstLine(): { line: number; column: number } {
  return { line: 1, column: 1 };
}

/**
 * Lowers a policy object for the checks; the lowering stage takes the result over (lowerPolicyOnce). With
 * `withoutPositions` (an API object under admission, which has no text) locations are plain objects (line and
 * column 0): the lazy positions of a text cost most of the lowering.
 */
export function lowerPolicyForChecks(
  doc: PolicyDocument,
  options: { withoutPositions?: boolean } = {},
): PolicyIR {
  const placement: Placement =
    options.withoutPositions === true
      ? { file: doc.file, locate: locateNowhere, withoutPositions: true }
      : { file: doc.file, locate: locateFirstLine };
  const ir = lowerWith(doc, placement);
  keptForLowering.set(doc.object, { kind: doc.kind, ir, placement });
  return ir;
}

/**
 * lowerPolicy, taking over the policy the checks lowered from this very object when there is one (its
 * locations are then placed in `doc.file` with `locate`; none was read before, they resolve on first read).
 */
export function lowerPolicyOnce(doc: PolicyDocument, locate: LocateFn): PolicyIR {
  const kept = keptForLowering.get(doc.object);
  if (kept === undefined || kept.kind !== doc.kind) return lowerPolicy(doc, locate);
  keptForLowering.delete(doc.object);
  // Plain locations cannot move to another file; an API object's locator knows no positions either.
  if (kept.placement.withoutPositions === true && kept.placement.file !== doc.file)
    return lowerPolicy(doc, locate);
  kept.placement.file = doc.file;
  kept.placement.locate = locate;
  return kept.ir;
}

/** Item pointers of rule lists, by list pointer: every policy names the same few (`/spec/file/matchPaths/0`). */
const itemPointers = new Map<string, string[]>();
/** Longest list whose item pointers are kept (a longer list's further items are built each time). */
const MAX_KEPT_ITEMS = 256;

/** `${list}/${i}`, the same string each time for the first items of a list. */
function itemPointer(list: string, i: number): string {
  if (i >= MAX_KEPT_ITEMS) return `${list}/${i}`;
  let items = itemPointers.get(list);
  if (items === undefined) itemPointers.set(list, (items = []));
  return (items[i] ??= `${list}/${i}`);
}

/**
 * A rule's location in a text: line and column are resolved on first read (most compiles never read them) and
 * kept. One small object per rule, its accessors on the prototype: no closures per location. JSON gives the
 * same fields as a plain location.
 */
class LazyLocation implements SourceLocation {
  private position: { line: number; column: number } | undefined;

  constructor(
    private readonly placement: Placement,
    readonly pointer: string,
  ) {}

  get file(): string {
    return this.placement.file;
  }

  get line(): number {
    this.position ??= this.placement.locate(this.pointer);
    return this.position.line;
  }

  get column(): number {
    this.position ??= this.placement.locate(this.pointer);
    return this.position.column;
  }

  toJSON(): SourceLocation {
    return { file: this.file, pointer: this.pointer, line: this.line, column: this.column };
  }
}

/** The location of `pointer`: lazy in a text, plain (line and column 0) for an object without text. */
function locationAt(placement: Placement, pointer: string): SourceLocation {
  return placement.withoutPositions === true
    ? { file: placement.file, pointer, line: 0, column: 0 }
    : new LazyLocation(placement, pointer);
}

function lowerWith(doc: PolicyDocument, placement: Placement): PolicyIR {
  const spec = doc.object.spec as unknown as Inherited & Record<string, unknown>;
  const rules: Rule[] = [];
  for (const { name, lists } of RULE_SECTIONS) {
    const section = spec[name] as RawSection | undefined;
    // A section written with no value (null) has no rules, as one left out.
    if (section === undefined || section === null) continue;
    for (const ls of lists) {
      const list = section[ls.list] as readonly RawRule[] | undefined;
      if (list === undefined) continue;
      for (let i = 0; i < list.length; i++) {
        const r = list[i] as RawRule;
        const matcher = ls.matcher(r);
        const action = resolveAction(r, section, spec);
        if (matcher === undefined || action === undefined) continue;
        rules.push({
          operation: ls.operation,
          matcher,
          fromSource: lowerSources(r.fromSource),
          readOnly: r.readOnly === true,
          ownerOnly: r.ownerOnly === true,
          action,
          severity: r.severity ?? section?.severity ?? spec.severity ?? DEFAULT_SEVERITY,
          tags: copyStrings(r.tags ?? section?.tags ?? spec.tags),
          message: r.message ?? section?.message ?? spec.message ?? '',
          allowedArgs: copyStrings(r.allowedArgs),
          // `pts` makes a terminal rule whatever its value: `pts: false` too applies only to processes with a
          // terminal, as the reference reads it (RT3025 warns; docs/semantics.md).
          pts: r.pts === true || r.pts === false,
          location: locationAt(placement, itemPointer(ls.pointer, i)),
        });
      }
    }
  }
  const syscalls = spec['syscalls'] as RawSyscalls | undefined;
  const syscallRules: SyscallRule[] = [];
  if (syscalls !== undefined && syscalls !== null)
    for (const list of SYSCALL_LISTS) {
      syscalls[list]?.forEach((r, i) => {
        const action = resolveAction(r, syscalls, spec);
        if (action === undefined) return;
        const rule: SyscallRule = {
          syscalls: [...(r.syscall ?? [])],
          recursive: r.recursive === true,
          fromSource: lowerSources(r.fromSource),
          action,
          ...resolveInherited(r, syscalls, spec),
          location: locationAt(placement, itemPointer(`/spec/syscalls/${list}`, i)),
        };
        if (r.path !== undefined) rule.path = r.path;
        syscallRules.push(rule);
      });
    }
  const presets: PresetRule[] = [];
  (spec['presets'] as Array<{ name: string; action?: string }> | undefined)?.forEach((p, i) => {
    const action = resolveAction(p, spec);
    if (action !== undefined)
      presets.push({
        name: p.name,
        action,
        ...resolveInherited(spec),
        location: locationAt(placement, itemPointer('/spec/presets', i)),
      });
  });
  const network = spec['network'] as
    | (Inherited & {
        matchDNSQueries?: readonly (Inherited & {
          domain: string;
          fromSource?: readonly RawSource[] | null;
        })[];
      })
    | undefined;
  const dnsQueryRules: DnsQueryRule[] = [];
  network?.matchDNSQueries?.forEach((r, i) => {
    const action = resolveAction(r, network, spec);
    if (action === undefined) return;
    dnsQueryRules.push({
      domain: r.domain,
      fromSource: lowerSources(r.fromSource),
      action,
      location: locationAt(placement, itemPointer('/spec/network/matchDNSQueries', i)),
    });
  });
  const device = spec['device'] as
    (Inherited & { matchDevice?: readonly (Inherited & { class: string })[] }) | undefined;
  const deviceRules: DeviceRule[] = [];
  device?.matchDevice?.forEach((r, i) => {
    const action = resolveAction(r, device, spec);
    if (action === undefined) return;
    deviceRules.push({
      deviceClass: r.class,
      action,
      location: locationAt(placement, itemPointer('/spec/device/matchDevice', i)),
    });
  });
  return {
    kind: doc.kind,
    name: doc.object.metadata.name,
    namespace: doc.kind === 'RuntimePolicy' ? (doc.object.metadata.namespace ?? DEFAULT_NAMESPACE) : '',
    target: targetOf(doc),
    rules: tight(rules),
    syscallRules: syscallRules.length === 0 ? NO_SYSCALL_RULES : tight(syscallRules),
    presets: presets.length === 0 ? NO_PRESETS : tight(presets),
    dnsQueryRules: dnsQueryRules.length === 0 ? NO_DNS_QUERY_RULES : tight(dnsQueryRules),
    deviceRules: deviceRules.length === 0 ? NO_DEVICE_RULES : tight(deviceRules),
    apparmor: typeof spec['apparmor'] === 'string' ? spec['apparmor'] : '',
    location: locationAt(placement, ''),
  };
}
