// What the front end reads: texts (files of YAML documents) or API objects (as the API server returns them).

/** One input text. */
export interface SourceText {
  file: string;
  text: string;
}

/** One API object, already decoded, named for diagnostics (`kubernetes:RuntimePolicy/ns/name`). */
export interface SourceObject {
  file: string;
  object: unknown;
}
