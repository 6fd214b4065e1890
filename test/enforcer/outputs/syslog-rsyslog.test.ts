// The syslog output against a real rsyslogd (Debian's rsyslog): a private instance on loopback ports and a
// socket in a temporary directory (imudp, imtcp, imptcp on a unix stream socket), writing each input to its
// own file with a template that exposes what rsyslog parsed (PRI, severity, facility, app-name, host name,
// msgid, structured data, MSG). Each transport sends alerts; the files must hold them with the right header
// fields and the JSON record intact, even when the alert holds quotes, brackets, newlines and DEL.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { AlertRecord } from '../../../enforcer/alerts/alert-record.js';
import type { AlertOutput } from '../../../enforcer/outputs/alert-output.js';
import { parseOutputSpec, type SyslogOutputSpec } from '../../../enforcer/outputs/output-spec.js';
import { createSyslogOutput } from '../../../enforcer/outputs/syslog-output.js';
import { SD_ID } from '../../../enforcer/outputs/syslog-message.js';
import { hasCommand, requirePrereqs } from '../../support/prereq.js';
import { sampleAlert, waitFor } from './support.js';

const logger = pino({ level: 'silent' });
const RSYSLOGD = existsSync('/usr/sbin/rsyslogd') ? '/usr/sbin/rsyslogd' : 'rsyslogd';

/** A TCP port free right now on loopback (rsyslog cannot report a port it chose). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function freeUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** One line rsyslog wrote, split into the template's fields. */
interface Received {
  pri: number;
  severity: number;
  facility: number;
  appName: string;
  hostName: string;
  procId: string;
  msgId: string;
  structuredData: string;
  msg: string;
}

function readReceived(file: string): Received[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const f = JSON.parse(line) as Record<string, string>;
      return {
        pri: Number(f['pri']),
        severity: Number(f['severity']),
        facility: Number(f['facility']),
        appName: f['appName'] ?? '',
        hostName: f['hostName'] ?? '',
        procId: f['procId'] ?? '',
        msgId: f['msgId'] ?? '',
        structuredData: f['structuredData'] ?? '',
        msg: f['msg'] ?? '',
      };
    });
}

async function canConnect(options: { port: number; host: string } | { path: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(options);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('syslog output into a real rsyslogd (UDP, TCP octet-counted, unix stream socket)', function () {
  this.timeout(60_000);
  let dir = '';
  let rsyslog: ChildProcess | undefined;
  let stderr = '';
  let udpPort = 0;
  let tcpPort = 0;
  const outputs: AlertOutput[] = [];

  before(async function () {
    requirePrereqs(this, [
      [hasCommand(RSYSLOGD) || existsSync(RSYSLOGD), 'rsyslogd (Debian package rsyslog)'],
    ]);
    dir = mkdtempSync(join(tmpdir(), 'rtctl-rsyslog-'));
    udpPort = await freeUdpPort();
    tcpPort = await freePort();
    // Each line rsyslog writes is a JSON object of what it parsed (option.jsonf), so no value can break it.
    const fields: [string, string][] = [
      ['pri', 'pri'],
      ['severity', 'syslogseverity'],
      ['facility', 'syslogfacility'],
      ['appName', 'app-name'],
      ['hostName', 'hostname'],
      ['procId', 'procid'],
      ['msgId', 'msgid'],
      ['structuredData', 'structured-data'],
      ['msg', 'msg'],
    ];
    const config = [
      `global(workDirectory="${dir}" maxMessageSize="64k")`,
      'module(load="imudp")',
      'module(load="imtcp")',
      'module(load="imptcp")',
      'template(name="fields" type="list" option.jsonf="on") {',
      ...fields.map(([out, name]) => `  property(outname="${out}" name="${name}" format="jsonf")`),
      '}',
      `input(type="imudp" address="127.0.0.1" port="${udpPort}" ruleset="udp")`,
      `input(type="imtcp" address="127.0.0.1" port="${tcpPort}" ruleset="tcp")`,
      `input(type="imptcp" path="${dir}/syslog.sock" unlink="on" ruleset="unix")`,
      ...['udp', 'tcp', 'unix'].map(
        (r) => `ruleset(name="${r}") { action(type="omfile" file="${dir}/${r}.log" template="fields") }`,
      ),
      '',
    ].join('\n');
    writeFileSync(join(dir, 'rsyslog.conf'), config);
    rsyslog = spawn(RSYSLOGD, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    rsyslog.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    rsyslog.stdout?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<never>((_, reject) =>
      rsyslog?.once('exit', (code) => reject(new Error(`rsyslogd exited with ${String(code)}: ${stderr}`))),
    );
    exited.catch(() => undefined);
    let ready = false;
    const poll = (async () => {
      await waitFor(() => ready, 'rsyslogd listening');
    })();
    const check = setInterval(() => {
      void (async () => {
        ready =
          (await canConnect({ host: '127.0.0.1', port: tcpPort })) &&
          existsSync(join(dir, 'syslog.sock')) &&
          (await canConnect({ path: join(dir, 'syslog.sock') }));
      })();
    }, 50);
    try {
      await Promise.race([poll, exited]);
    } finally {
      clearInterval(check);
    }
  });

  afterEach(async () => {
    for (const o of outputs.splice(0)) await o.close(2000);
  });

  after(async () => {
    if (rsyslog && rsyslog.exitCode === null) {
      const gone = new Promise((r) => rsyslog?.once('exit', r));
      rsyslog.kill('SIGTERM');
      await gone;
    }
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const output = (text: string): AlertOutput => {
    const spec = parseOutputSpec(text) as SyslogOutputSpec;
    const o = createSyslogOutput(spec, { logger, procId: 4242 });
    outputs.push(o);
    return o;
  };

  const hostile: Partial<AlertRecord> = {
    PolicyName: 'odd "name" ] \\ here',
    Resource: '/tmp/a\nb\u007fc ]"',
    Message: 'line one\r\nline two\u2028',
  };

  /** Sends alerts and checks what rsyslog wrote. */
  async function sendAndCheck(
    file: string,
    o: AlertOutput,
    alerts: AlertRecord[],
    expect: { facility: number; appName: string },
  ): Promise<void> {
    for (const a of alerts) o.send(a, JSON.stringify(a));
    await waitFor(
      () => readReceived(join(dir, file)).length >= alerts.length,
      `${alerts.length} lines in ${file}`,
    );
    const got = readReceived(join(dir, file));
    assert.equal(got.length, alerts.length, stderr);
    got.forEach((r, i) => {
      const a = alerts[i];
      assert.ok(a);
      const sev = Number(a.Severity);
      const syslogSev = sev >= 9 ? 2 : sev >= 7 ? 3 : sev >= 4 ? 4 : sev >= 1 ? 5 : 6;
      assert.equal(r.severity, syslogSev, `severity of alert with Severity ${a.Severity}`);
      assert.equal(r.facility, expect.facility);
      assert.equal(r.pri, expect.facility * 8 + syslogSev);
      assert.equal(r.appName, expect.appName);
      assert.equal(r.hostName, a.HostName);
      assert.equal(r.procId, '4242');
      assert.equal(r.msgId, a.Action);
      assert.ok(r.structuredData.startsWith(`[${SD_ID} `), r.structuredData);
      assert.ok(r.structuredData.includes(`Action="${a.Action}"`), r.structuredData);
      assert.deepEqual(JSON.parse(r.msg), a, 'the JSON record arrives intact');
    });
    assert.equal(o.stats().sent, alerts.length);
    assert.equal(o.stats().failed, 0);
  }

  it('UDP: one datagram per alert, PRI from facility and severity', async () => {
    const o = output(`syslog+udp://127.0.0.1:${udpPort}?facility=local3&appName=rtctl-test`);
    // UDP has no connection to tell when imudp is bound: probe until one datagram arrives.
    await waitFor(() => {
      o.send(sampleAlert(0, { Severity: '0' }), '');
      return readReceived(join(dir, 'udp.log')).length > 0;
    }, 'first UDP datagram received');
    await waitFor(() => o.stats().queued === 0, 'probes sent');
    const probes = readReceived(join(dir, 'udp.log')).length;
    const probesSent = o.stats().sent;
    const alerts = [
      sampleAlert(1, { Severity: '9' }),
      sampleAlert(2, { Severity: '7', Action: 'Audit' }),
      sampleAlert(3, hostile),
      sampleAlert(4, { Severity: '1' }),
    ];
    for (const a of alerts) o.send(a, JSON.stringify(a));
    await waitFor(
      () => readReceived(join(dir, 'udp.log')).length >= probesSent + alerts.length,
      'alerts in udp.log',
    );
    const got = readReceived(join(dir, 'udp.log')).slice(probesSent);
    assert.ok(probes <= probesSent);
    assert.equal(got.length, alerts.length);
    got.forEach((r, i) => {
      const a = alerts[i];
      assert.ok(a);
      assert.equal(r.facility, 19);
      assert.equal(r.appName, 'rtctl-test');
      assert.equal(r.pri, 19 * 8 + ([2, 3, 4, 5][i] ?? -1));
      assert.deepEqual(JSON.parse(r.msg), a);
    });
  });

  it('TCP: octet-counted frames, JSON intact across quotes, brackets, newlines and DEL', async () => {
    const o = output(`syslog+tcp://127.0.0.1:${tcpPort}?facility=daemon&appName=rtctl`);
    const alerts = [
      sampleAlert(1),
      sampleAlert(2, hostile),
      sampleAlert(3, { Severity: '10', Action: 'Audit' }),
    ];
    await sendAndCheck('tcp.log', o, alerts, { facility: 3, appName: 'rtctl' });
  });

  it('unix stream socket: octet-counted frames to imptcp', async () => {
    const o = output(`syslog+unix://${dir}/syslog.sock?appName=node-agent`);
    const alerts = Array.from({ length: 50 }, (_, i) => sampleAlert(i + 1, { Severity: String(i % 11) }));
    await sendAndCheck('unix.log', o, alerts, { facility: 16, appName: 'node-agent' });
  });

  it('format sd: every field in structured data, escaped; MSG a summary line', async () => {
    const o = output(`syslog+tcp://127.0.0.1:${tcpPort}?format=sd`);
    const before = readReceived(join(dir, 'tcp.log')).length;
    const a = sampleAlert(7, hostile);
    o.send(a, JSON.stringify(a));
    await waitFor(() => readReceived(join(dir, 'tcp.log')).length > before, 'sd line');
    const r = readReceived(join(dir, 'tcp.log'))[before];
    assert.ok(r);
    assert.ok(r.structuredData.includes('PolicyName="odd \\"name\\" \\] \\\\ here"'), r.structuredData);
    assert.ok(r.structuredData.includes('HostPID="107"'), r.structuredData);
    assert.match(r.msg, /^Block Process \/tmp\/a\\u000ab\\u007fc \]" by \/bin\/sh in ns-a\/web-1/);
  });

  it('a stream output without a receiver queues (bounded), counts drops, and delivers once one listens', async () => {
    const port = await freePort();
    const o = output(`syslog+tcp://127.0.0.1:${port}?queueSize=3`);
    for (let i = 1; i <= 5; i++) o.send(sampleAlert(i), '');
    assert.equal(o.stats().dropped, 2);
    assert.equal(o.stats().queued, 3);
    await waitFor(
      () => o.stats().retries > 0 && o.stats().lastError !== undefined,
      'a failed connection noticed',
    );
    const received: string[] = [];
    const server = createServer((s) => s.setEncoding('utf8').on('data', (c: string) => received.push(c)));
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    try {
      await waitFor(() => o.stats().sent === 3, 'queued frames delivered after reconnect', 40_000);
      await waitFor(() => (received.join('').match(/<\d+>1 /g) ?? []).length >= 3, 'frames read');
      // Octet counting: each frame starts with its length in bytes.
      const text = received.join('');
      const m = /^(\d+) /.exec(text);
      assert.ok(m?.[1]);
      const firstLen = Number(m[1]);
      assert.equal(Buffer.byteLength(text.slice(m[0].length)) >= firstLen, true);
      assert.match(
        Buffer.from(text)
          .subarray(m[0].length + firstLen)
          .toString(),
        /^\d+ <\d+>1 /,
      );
    } finally {
      await o.close(1000);
      server.close();
    }
  });
});
