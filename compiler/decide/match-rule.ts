// Whether one rule matches one operation: resource, acting executable, terminal and arguments, and the
// readOnly/ownerOnly exemptions (docs/semantics.md).
import { Action, Operation, type Matcher, type Rule, type SourceMatcher } from '../ir/rule-set.js';
import type { OperationRequest } from './decision-input.js';
import { getBaseName, isInDirectory, matchesGlob, normalizeAbsolutePath } from './path-match.js';
import { formatIpAddress, isAddressInCidr, parseCidr, parseIpAddress } from '../net/cidr.js';
import { getOperationSocketNames } from './socket-names.js';

/** The capability name without `cap_`, lower case. */
export function normalizeCapability(name: string): string {
  const lower = name.toLowerCase();
  return lower.startsWith('cap_') ? lower.slice(4) : lower;
}

/** True when the matcher kind belongs to the operation class (paths for Process/File, protocols, capabilities). */
export function isMatcherForOperation(matcher: Matcher, operation: Operation): boolean {
  switch (operation) {
    case Operation.Process:
    case Operation.File:
      return (
        matcher.kind === 'path' ||
        matcher.kind === 'execname' ||
        matcher.kind === 'directory' ||
        matcher.kind === 'pattern'
      );
    case Operation.Network:
      return matcher.kind === 'protocol' || matcher.kind === 'address';
    case Operation.Capabilities:
      return matcher.kind === 'capability';
  }
}

/**
 * The operation with its paths normalized (`normalizeAbsolutePath`): Process/File resources and the
 * acting executables. Both the oracle and the rule-table reader decide on this form.
 */
export function normalizeOperationRequest(op: OperationRequest): OperationRequest {
  const out: OperationRequest = { ...op };
  if (op.operation === Operation.Process || op.operation === Operation.File) {
    out.resource = normalizeAbsolutePath(op.resource);
  }
  if (op.operation === Operation.Network) {
    out.resource = op.resource.toLowerCase();
    if (op.socketNames !== undefined) out.socketNames = getOperationSocketNames(op);
    if (op.address !== undefined) {
      const parsed = parseIpAddress(op.address);
      // An address that does not parse matches no address rule; keep it as given.
      out.address = parsed.ok ? formatIpAddress(parsed.value) : op.address;
      out.port = op.port ?? 0;
    }
  }
  if (op.executable !== undefined) out.executable = normalizeAbsolutePath(op.executable);
  if (op.parentExecutable !== undefined) out.parentExecutable = normalizeAbsolutePath(op.parentExecutable);
  return out;
}

/** True when the matcher matches the operation's resource. */
export function matchesResource(matcher: Matcher, operation: OperationRequest): boolean {
  const resource = operation.resource;
  switch (matcher.kind) {
    case 'path':
      return resource === matcher.path;
    case 'execname':
      return getBaseName(resource) === matcher.name;
    case 'directory':
      return isInDirectory(resource, matcher.dir, matcher.recursive);
    case 'pattern':
      return matchesGlob(matcher.pattern, resource);
    case 'protocol': {
      // A socket has the names of its type and of its protocol; the rule matches either (socket-names.ts).
      const wanted = matcher.protocol.toLowerCase();
      return wanted === 'all' || getOperationSocketNames(operation).includes(wanted);
    }
    case 'capability':
      return normalizeCapability(resource) === normalizeCapability(matcher.capability);
    case 'address':
      return matchesAddress(matcher, operation);
  }
}

/**
 * True when an address rule matches a connect or sendmsg: the destination lies in the block, its port is
 * listed (or the rule lists none), and the rule's protocol is one of the socket's names (or the rule names
 * none). The creation of a socket (no address) matches no address rule.
 */
export function matchesAddress(
  matcher: Extract<Matcher, { kind: 'address' }>,
  operation: OperationRequest,
): boolean {
  if (operation.address === undefined) return false;
  const address = parseIpAddress(operation.address);
  const block = parseCidr(matcher.cidr);
  if (!address.ok || !block.ok || !isAddressInCidr(address.value, block.value)) return false;
  if (matcher.ports.length > 0 && !matcher.ports.includes(operation.port ?? 0)) return false;
  return matcher.protocol === '' || getOperationSocketNames(operation).includes(matcher.protocol);
}

/** The executable `fromSource` is compared with: the parent's for Process, the process's own otherwise. */
export function getActor(operation: OperationRequest): string | undefined {
  return operation.operation === Operation.Process ? operation.parentExecutable : operation.executable;
}

/** True when the source matcher matches the acting executable. */
export function matchesSource(source: SourceMatcher, actor: string): boolean {
  return source.kind === 'path' ? actor === source.path : isInDirectory(actor, source.dir, source.recursive);
}

/** True when the rule's readOnly/ownerOnly exemptions let it apply to this access. */
export function isRuleApplicable(rule: Rule, operation: OperationRequest): boolean {
  const exempt = rule.readOnly || rule.ownerOnly;
  const write = operation.operation === Operation.File && operation.write;
  const acceptable = (!rule.readOnly || !write) && (!rule.ownerOnly || operation.owner);
  return rule.action === Action.Allow ? !exempt || acceptable : !(exempt && acceptable);
}

/** True when the rule matches the operation (resource, source, terminal, arguments, exemptions). */
export function matchesRule(rule: Rule, operation: OperationRequest): boolean {
  if (rule.operation !== operation.operation) return false;
  if (!isMatcherForOperation(rule.matcher, rule.operation)) return false;
  if (!matchesResource(rule.matcher, operation)) return false;
  if (rule.fromSource.length > 0) {
    const actor = getActor(operation);
    if (actor === undefined || !rule.fromSource.some((s) => matchesSource(s, actor))) return false;
  }
  if (rule.pts && operation.tty !== true) return false;
  if (rule.allowedArgs.length > 0 && !(operation.args ?? []).every((a) => rule.allowedArgs.includes(a))) {
    return false;
  }
  return isRuleApplicable(rule, operation);
}
