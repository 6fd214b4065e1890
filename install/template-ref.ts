// A value the Helm chart leaves to `helm install`: the description's builders place it like any value, and the
// chart renderer turns it into a template action. Builders never compute on a value, they only place it, so
// one builder makes both the concrete manifests and the chart's templates.

/** How a reference is written into a template. */
export const RefForm = {
  /** A scalar: `{{ .Values.x }}`. */
  Scalar: 'scalar',
  /** A structure: `{{- toYaml .Values.x | nindent N }}` under its key. */
  Yaml: 'yaml',
} as const;
export type RefForm = (typeof RefForm)[keyof typeof RefForm];

/** A reference to a chart value. */
export class TemplateRef {
  constructor(
    readonly expr: string,
    readonly form: RefForm,
  ) {}
}

/** A value, or in the chart a reference to one. */
export type Param<T> = T | TemplateRef;

/** Marks a reference inside a string (a whole string, or part of an argument such as `--x=<ref>`). */
export function textRef(expr: string): string {
  return `@@{${expr}}@@`;
}

/** The sentinel a TemplateRef becomes before serialisation. */
export function sentinelOf(ref: TemplateRef): string {
  return `@@<${ref.form}:${ref.expr}>@@`;
}
