// What stage 2 hands on: the policy documents without errors (to lower), the postures each Namespace declares
// (for the cross checks, `rtctl explain` and the enforcer), and the findings placed.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { DeclaredPostures } from '../model/posture.js';
import type { PolicyDocument } from '../model/policy-document.js';
import type { SourceDocument } from './source-document.js';

/** A policy document without errors, with the document it came from. */
export interface CheckedPolicy {
  document: PolicyDocument;
  source: SourceDocument;
}

/** Postures one Namespace object declares, and the file that declared them. */
export interface NamespacePostures {
  /** The classes annotated with a valid value (see compiler/model/posture.ts). */
  postures: DeclaredPostures;
  file: string;
}

/** The checked documents of one or more inputs. */
export interface CheckedDocuments {
  policies: CheckedPolicy[];
  /** By namespace name; a later Namespace object of the same name replaces an earlier one. */
  namespaces: Map<string, NamespacePostures>;
  diagnostics: Diagnostic[];
  /** Non-empty documents seen. */
  documentCount: number;
}
