// One HTTP request from wherever this process runs (the tests start it inside a network namespace with
// `ip netns exec`), printed as one JSON line: {status, headers, body} or {error}. A request that gets no
// response within timeoutMs reports {error: "timeout"}.
//   node --import tsx probe.ts '{"method":"PUT","url":"http://169.254.169.254/latest/api/token","headers":{...},"timeoutMs":3000}'
import { request } from 'node:http';

interface ProbeInput {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as ProbeInput;
const url = new URL(input.url);
const timeoutMs = input.timeoutMs ?? 3000;
let done = false;
const finish = (result: unknown) => {
  if (done) return;
  done = true;
  process.stdout.write(`${JSON.stringify(result)}\n`);
};
const req = request(
  {
    host: url.hostname,
    port: url.port || 80,
    method: input.method,
    path: url.pathname,
    headers: input.headers ?? {},
    agent: false,
  },
  (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => {
      clearTimeout(timer);
      finish({ status: res.statusCode, headers: res.headers, body });
    });
  },
);
const timer = setTimeout(() => {
  finish({ error: 'timeout' });
  req.destroy();
}, timeoutMs);
req.on('error', (err) => {
  clearTimeout(timer);
  finish({ error: err.message });
});
if (input.body !== undefined) req.write(input.body);
req.end();
