// The shape of an admission rule: a pure function from the request to a decision.
import type { AdmissionRequest } from '../admission-review.js';
import type { Decision } from '../decision.js';

/** A named admission rule. `decide` must not throw for bad input (a throw is a bug and answers 500). */
export interface AdmissionRule {
  readonly name: string;
  decide(request: AdmissionRequest): Decision;
}
