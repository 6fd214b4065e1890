// `rtctl logs` against hostile loopback upstreams: a path holding newlines cannot forge `Field: value`
// lines in the readable output; an upstream that never sends a newline is refused once a line passes the
// bound (exit 2, a clear message, nothing buffered without limit); a stream-end line from a server that
// disconnected a slow reader makes the follower resume from the named sequence; a gap is reported.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import '../../support/property-seed.js';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import { AlertStreamError, followAlerts } from '../../../enforcer/alerts/follow-alerts.js';
import { escapeAlertValue, formatAlert } from '../../../enforcer/alerts/format-alert.js';
import { formatStreamEnd } from '../../../enforcer/alerts/stream-end.js';
import { REPO_ROOT, rtctlArgs } from '../support/enforcer-process.js';

const ALERT = {
  Timestamp: 1795333130,
  UpdatedTime: '2026-11-22T07:38:50.000000Z',
  NamespaceName: 'ns-a',
  PodName: 'web-1',
  Operation: 'File',
  Action: 'Block',
} as unknown as AlertRecord;

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function streamHeaders(res: ServerResponse, first = 1): void {
  res.writeHead(200, {
    'content-type': 'application/x-ndjson',
    'x-alert-stream': 'hostile',
    'x-alert-first-seq': String(first),
  });
}

function runLogs(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, rtctlArgs(['logs', ...args]), { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('rtctl logs against hostile upstreams', function () {
  this.timeout(120000);
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.closeAllConnections();
    for (const s of servers) s.close();
  });

  it('escapes control characters: a path with newlines cannot forge fields (property, fixed seed)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.string({ maxLength: 20 }),
        (resource, tags) => {
          const text = formatAlert({ ...ALERT, Resource: resource, Tags: tags });
          const lines = text.split('\n');
          // Header, one line per non-empty field, then the blank line and the empty string after it.
          const fields = 4 + (resource === '' ? 0 : 1) + (tags === '' ? 0 : 1);
          assert.equal(lines.length, 1 + fields + 2, text);
          for (const l of lines.slice(1, -2)) assert.match(l, /^[A-Za-z]+: /);
          assert.doesNotMatch(
            text.replace(/\n/g, ''),
            // eslint-disable-next-line no-control-regex -- no control character may be left
            /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/,
          );
        },
      ),
      { seed: 20261123, numRuns: 200 },
    );
    assert.equal(escapeAlertValue('/tmp/x\nPolicyName: forged'), '/tmp/x\\nPolicyName: forged');
    assert.equal(escapeAlertValue('a\\b\u001b[2J\u202e'), 'a\\\\b\\u{001B}[2J\\u{202E}');
  });

  it('prints a hostile path as one escaped line (real CLI, readable output)', async () => {
    const { server, url } = await serve((_req, res) => {
      streamHeaders(res);
      res.end(
        `${JSON.stringify({ ...ALERT, Resource: '/tmp/evil\nPolicyName: allow-all\nAction: Audit' })}\n`,
      );
    });
    servers.push(server);
    const r = await runLogs(['--no-follow', '--server', url]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal((r.stdout.match(/^PolicyName:/gm) ?? []).length, 0, r.stdout);
    assert.equal((r.stdout.match(/^Action:/gm) ?? []).length, 1, r.stdout);
    assert.match(r.stdout, /^Resource: \/tmp\/evil\\nPolicyName: allow-all\\nAction: Audit$/m);
  });

  it('refuses an upstream that never sends a newline: exit 2 with a clear message', async () => {
    let sent = 0;
    const { server, url } = await serve((_req, res) => {
      streamHeaders(res);
      const chunk = 'x'.repeat(64 * 1024);
      const push = (): void => {
        // Bounded: at most 8 MiB, far past the 1 MiB line bound.
        while (sent < 8 * 1024 * 1024 && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', push);
            return;
          }
        }
      };
      push();
    });
    servers.push(server);
    for (const follow of [[], ['--no-follow']]) {
      sent = 0;
      const r = await runLogs([...follow, '--server', url]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(
        r.stderr,
        /^rtctl: logs: http:\/\/127\.0\.0\.1:\d+: a line longer than 1048576 characters: not an alert stream\n$/,
      );
      assert.equal(r.stdout, '');
      assert.ok(sent < 8 * 1024 * 1024, `the reader stopped early (${sent} bytes sent)`);
    }
  });

  it('refuses an upstream that is not an alert stream (no stream headers, or lines that are not JSON objects)', async () => {
    const { server, url } = await serve((req, res) => {
      if (req.url?.includes('follow=0') && req.headers['x-case'] === undefined) {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>\n');
      }
    });
    servers.push(server);
    await assert.rejects(
      followAlerts({ servers: [url], follow: false, onAlert: () => undefined }),
      (e: unknown) => e instanceof AlertStreamError && /not an rtctl alert stream/.test(e.message),
    );
    const { server: s2, url: u2 } = await serve((_req, res) => {
      streamHeaders(res);
      res.end('[1,2,3]\n');
    });
    servers.push(s2);
    await assert.rejects(
      followAlerts({ servers: [u2], follow: true, onAlert: () => undefined }),
      (e: unknown) => e instanceof AlertStreamError && /not a JSON object/.test(e.message),
    );
  });

  it('resumes from the sequence a stream-end line names, and reports alerts no longer held', async () => {
    const afters: string[] = [];
    const { server, url } = await serve((req, res) => {
      const after = new URL(req.url ?? '/', 'http://x').searchParams.get('after') ?? '';
      afters.push(after);
      if (after === '0') {
        streamHeaders(res, 1);
        res.end(
          `${JSON.stringify({ ...ALERT, PodName: 'p1' })}\n${JSON.stringify({ ...ALERT, PodName: 'p2' })}\n${formatStreamEnd(40, 2)}\n`,
        );
      } else if (after === '2') {
        // The server no longer holds 3..9: the first line sent is 10.
        streamHeaders(res, 10);
        res.end(`${JSON.stringify({ ...ALERT, PodName: 'p10' })}\n`);
      } else {
        res.writeHead(500).end();
      }
    });
    servers.push(server);
    const pods: string[] = [];
    const notices: string[] = [];
    const abort = new AbortController();
    await followAlerts({
      servers: [url],
      follow: true,
      signal: abort.signal,
      retryMs: 10,
      onAlert: (a) => {
        pods.push(a.PodName);
        if (pods.length === 3) abort.abort();
      },
      onNotice: (m) => notices.push(m),
    });
    assert.deepEqual(pods, ['p1', 'p2', 'p10']);
    assert.deepEqual(afters.slice(0, 2), ['0', '2']);
    assert.match(notices[0] ?? '', /fell behind by 40 alerts; resuming after 2/);
    assert.match(notices[1] ?? '', /7 alerts \(3\.\.9\) are no longer held/);
  });
});
