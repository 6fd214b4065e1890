// The HTML document the metadata service answers errors with: its <title> (and heading) carry the status
// and its text, e.g. "401 - Unauthorized", as on the real service.
import { STATUS_CODES } from 'node:http';

/** The `<status> - <text>` line of an error page. */
export function formatStatusLine(status: number): string {
  return `${status} - ${STATUS_CODES[status] ?? 'Error'}`;
}

/** Renders the error document for a status. Takes no user input, so nothing needs escaping. */
export function renderErrorPage(status: number): string {
  const line = formatStatusLine(status);
  return [
    '<?xml version="1.0" encoding="iso-8859-1"?>',
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"',
    '\t"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">',
    '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">',
    ' <head>',
    `  <title>${line}</title>`,
    ' </head>',
    ' <body>',
    `  <h1>${line}</h1>`,
    ' </body>',
    '</html>',
    '',
  ].join('\n');
}
