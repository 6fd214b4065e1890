// The unit every stage after parsing works on: one decoded document and the input it came from.
import type { DocumentLocator } from './document-locator.js';

/** One non-empty document of an input. */
export interface SourceDocument {
  /** The input's locator (its file name and positions). */
  locator: DocumentLocator;
  /** 0-based index of the document within its input. */
  index: number;
  value: unknown;
}
