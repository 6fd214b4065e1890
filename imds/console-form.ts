// The console form of modify-instance-metadata-options: a small HTML page on the management endpoint that
// posts the operation form-encoded, with the management token typed in by the operator. Instance ids are
// escaped even though the config already restricts them.
import {
  HttpEndpoint,
  HttpTokens,
  InstanceMetadataTags,
} from '../compiler/instance-metadata-options/options.js';
import { MANAGE_TOKEN_FIELD, MODIFY_PATH } from './manage-paths.js';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function select(name: string, values: readonly string[]): string {
  const options = [
    '<option value="">(unchanged)</option>',
    ...values.map((v) => `<option>${escapeHtml(v)}</option>`),
  ];
  return `<label>${name} <select name="${name}">${options.join('')}</select></label>`;
}

/** Renders the form for the given instance ids. */
export function renderConsoleForm(instanceIds: readonly string[]): string {
  const ids = instanceIds.map((id) => `<option>${escapeHtml(id)}</option>`).join('');
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><title>modify-instance-metadata-options</title></head><body>',
    '<h1>modify-instance-metadata-options</h1>',
    `<form method="post" action="${MODIFY_PATH}">`,
    `<p><label>instance-id <select name="instance-id">${ids}</select></label></p>`,
    `<p>${select('http-endpoint', Object.values(HttpEndpoint))}</p>`,
    `<p>${select('http-tokens', Object.values(HttpTokens))}</p>`,
    '<p><label>http-put-response-hop-limit <input name="http-put-response-hop-limit" inputmode="numeric" size="3"></label></p>',
    `<p>${select('instance-metadata-tags', Object.values(InstanceMetadataTags))}</p>`,
    `<p><label>management token <input name="${MANAGE_TOKEN_FIELD}" type="password" autocomplete="off" size="44"></label></p>`,
    '<p><button type="submit">Modify</button></p>',
    '</form></body></html>',
    '',
  ].join('\n');
}
