// A renderer for exactly the template forms install/render/helm-chart.ts writes (`{{ .Values.x }}`,
// `{{ .Values.x | quote }}`, `{{ .Release.Namespace }}`, `{{- toYaml .Values.x | nindent N }}`, and a file
// wrapped in `{{- if .Values.x }}…{{- end }}`). No helm binary is packaged for Debian or the npm registry, so
// the tests render the chart with this and compare the result with the kustomize base. It throws on any
// other action, so a template form it does not know cannot pass unnoticed.
import { parseAllDocuments, stringify } from 'yaml';

function lookup(scope: Record<string, unknown>, expr: string): unknown {
  let node: unknown = scope;
  for (const key of expr.replace(/^\./, '').split('.')) {
    if (typeof node !== 'object' || node === null) throw new Error(`mini-helm: ${expr}: not found`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function indentYaml(value: unknown, n: number): string {
  const text = stringify(value, { aliasDuplicateObjects: false }).replace(/\n$/, '');
  return `\n${text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n')}`;
}

/** Renders one template file with these values and release namespace; returns the objects. */
export function renderTemplate(
  text: string,
  values: Record<string, unknown>,
  namespace: string,
): Array<Record<string, unknown>> {
  const scope = { Values: values, Release: { Namespace: namespace } };
  let body = text;
  const wrapped =
    /^((?:#[^\n]*\n)*)\{\{- if (\.Values\.[.A-Za-z0-9_]+) \}\}\n([\s\S]*)\{\{- end \}\}\n$/.exec(body);
  if (wrapped !== null) {
    if (lookup(scope, wrapped[2] ?? '') !== true) return [];
    body = (wrapped[1] ?? '') + (wrapped[3] ?? '');
  }
  body = body.replace(
    /\s*\{\{- toYaml ([.A-Za-z0-9_]+) \| nindent (\d+) \}\}/g,
    (_m, expr: string, n: string) => indentYaml(lookup(scope, expr), Number(n)),
  );
  body = body.replace(/\{\{ ([.A-Za-z0-9_]+)( \| quote)? \}\}/g, (_m, expr: string, quote?: string) => {
    const v = lookup(scope, expr);
    return quote === undefined ? String(v) : JSON.stringify(String(v));
  });
  if (body.includes('{{')) throw new Error(`mini-helm: unknown template action in:\n${body}`);
  return parseAllDocuments(body)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null);
}
