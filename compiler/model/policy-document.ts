// A validated policy document as read from a file: the plain object, its kind, and where it is.
import type { PolicyKind } from '../ir/rule-set.js';
import type { RuntimeHostPolicy, RuntimePolicy } from './types.js';

/** One policy document that passed parsing (it may still carry schema or semantic findings). */
export type PolicyDocument =
  | {
      kind: typeof PolicyKind.RuntimePolicy;
      object: RuntimePolicy;
      file: string;
      index: number;
      line: number;
    }
  | {
      kind: typeof PolicyKind.RuntimeHostPolicy;
      object: RuntimeHostPolicy;
      file: string;
      index: number;
      line: number;
    };
