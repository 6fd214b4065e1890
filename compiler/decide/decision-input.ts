// The inputs of a decision: which workload, which operation, which namespace postures.
import type { Operation } from '../ir/rule-set.js';

/** Whether a workload is a container (selected by RuntimePolicy) or a node's host processes (RuntimeHostPolicy). */
export const WorkloadKind = { Container: 'container', Host: 'host' } as const;
export type WorkloadKind = (typeof WorkloadKind)[keyof typeof WorkloadKind];

/** The workload an operation happens in. */
export interface Workload {
  kind: WorkloadKind;
  /** Namespace of the pod (containers); ignored for the host. */
  namespace: string;
  /** Pod or container labels (containers). */
  labels: Readonly<Record<string, string>>;
  /** Labels of the node (host policies select by these). */
  nodeLabels: Readonly<Record<string, string>>;
}

/** One operation to decide. */
export interface OperationRequest {
  operation: Operation;
  /**
   * Process: the executable's absolute path. File: the file's absolute path. Network: the protocol
   * (`tcp`) of the socket being created, or of the socket that connects or sends. Capabilities: the
   * capability name (`net_raw`, with or without `cap_`).
   */
  resource: string;
  /**
   * Network: every name of the socket, its type's and its protocol's (`['raw', 'icmp']` for a raw ICMP
   * socket; `getSocketNames` in socket-names.ts gives them from the socket's family, type and protocol).
   * Absent: the socket's one name is `resource`.
   */
  socketNames?: readonly string[];
  /**
   * Network: the destination address of a connect or sendmsg (IPv4 or IPv6 text; an IPv4-mapped IPv6
   * address is its IPv4 address). Absent: the operation is the creation of a socket.
   */
  address?: string;
  /** Network connect or sendmsg: the destination port (0 when the protocol has none). */
  port?: number;
  /** Absolute path of the acting process's executable (File, Network, Capabilities), if known. */
  executable?: string;
  /** Absolute path of the parent's executable (the acting executable of a Process operation), if known. */
  parentExecutable?: string;
  /** File: opened for writing. */
  write: boolean;
  /** The acting user owns the file (File) or the binary (Process). */
  owner: boolean;
  /** The process has a terminal (for `pts` rules). */
  tty?: boolean;
  /** Process: the argument list (for `allowedArgs` rules); unknown is treated as none. */
  args?: readonly string[];
}

// Postures live in the model (compiler/model/posture.ts); the oracle takes declared ones (missing: `audit`).
export { Posture, type DeclaredPostures as Postures } from '../model/posture.js';
