// Test helper: drives net-worker.py, a process that does socket operations on request, in a cgroup and a
// network namespace the test creates.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { getSocketNames, type SocketFacts } from '../../../compiler/decide/socket-names.js';

const WORKER = resolve(fileURLToPath(import.meta.url), '../net-worker.py');

/**
 * The sockets the worker opens, by kind (net-worker.py KINDS), for IPv4: `icmp` is a ping socket, `raw` a raw
 * ICMP socket (what ping opens as root), `raw-tcp` a raw socket of protocol 6, `packet` an AF_PACKET socket.
 */
export const WORKER_SOCKETS = {
  tcp: { family: 2, type: 1, protocol: 0 },
  udp: { family: 2, type: 2, protocol: 0 },
  icmp: { family: 2, type: 2, protocol: 1 },
  raw: { family: 2, type: 3, protocol: 1 },
  'raw-tcp': { family: 2, type: 3, protocol: 6 },
  packet: { family: 17, type: 3, protocol: 0 },
} as const satisfies Record<string, SocketFacts>;
export type WorkerSocketKind = keyof typeof WORKER_SOCKETS;

/** The socket names of a worker socket kind (the oracle's getSocketNames). */
export function getWorkerSocketNames(kind: WorkerSocketKind): string[] {
  return getSocketNames(WORKER_SOCKETS[kind]);
}

/** A worker process in its own network namespace, moved into a cgroup. */
export class Worker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];
  private readonly answerMs: number;
  private stderr = '';

  /**
   * `netns`: run in that named network namespace; absent: in a new one of its own (only `lo`, down).
   * `pidns`: also in a new pid namespace of its own (as a container's process is); the shell that starts it
   * enters the cgroup first, so the forked worker is born there. `userns` (with `pidns`): in a user namespace of
   * its own first (root mapped to the caller), as an unprivileged user makes one to get a pid namespace.
   * `answerMs`: how long an answer may take (default 10 s; a guest under qemu TCG needs longer). `python`: the
   * interpreter to run (a copy at another path acts as another executable, for fromSource); `tty`: the worker
   * makes a pseudo-terminal its controlling terminal (for pts rules).
   */
  constructor(
    cgroupDir: string,
    netns?: string,
    options: { pidns?: boolean; userns?: boolean; answerMs?: number; python?: string; tty?: boolean } = {},
  ) {
    this.answerMs = options.answerMs ?? 10_000;
    const python = options.python ?? 'python3';
    const env = options.tty === true ? { ...process.env, RTCTL_WORKER_TTY: '1' } : process.env;
    const argv = netns === undefined ? ['unshare', '-n'] : ['ip', 'netns', 'exec', netns];
    if (options.pidns === true) {
      const flags = [...(options.userns === true ? ['-U', '-r'] : []), '-p', '-f', '--kill-child'];
      const inner = netns === undefined ? flags : ['unshare', ...flags];
      this.child = spawn(
        'sh',
        ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroupDir, ...argv, ...inner, python, WORKER],
        { stdio: ['pipe', 'pipe', 'pipe'], env },
      );
    } else {
      this.child = spawn(argv[0] ?? 'unshare', [...argv.slice(1), python, WORKER], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env,
      });
      writeFileSync(join(cgroupDir, 'cgroup.procs'), String(this.child.pid));
    }
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-2000)));
    this.lines = createInterface({ input: this.child.stdout });
    this.lines.on('line', (l) => this.waiting.shift()?.(l));
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  private next(): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`worker did not answer in ${this.answerMs} ms: ${this.stderr.trim()}`)),
        this.answerMs,
      );
      this.waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  async ready(): Promise<void> {
    assert.deepEqual(JSON.parse(await this.next()), { ready: true });
  }

  /** A metadata token request; the HTTP status and body, or the errno of the connect. */
  async token(address: string): Promise<{ status?: number; body?: string; error?: number }> {
    const answer = this.next();
    this.child.stdin.write(`${JSON.stringify({ op: 'http', address, port: 80, kind: 'tcp' })}\n`);
    return JSON.parse(await answer) as { status?: number; body?: string; error?: number };
  }

  async run(req: {
    kind: string;
    op?: 'connect' | 'sendmsg';
    address?: string;
    port?: number;
  }): Promise<{ socket: number; send: number | null }> {
    const family = req.address?.includes(':') === true ? 6 : 4;
    const answer = this.next();
    this.child.stdin.write(`${JSON.stringify({ ...req, family })}\n`);
    return JSON.parse(await answer) as { socket: number; send: number | null };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    this.child.kill();
    await exited;
  }
}
