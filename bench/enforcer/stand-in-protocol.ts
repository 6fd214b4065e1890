// The control side of the fanotify helper's socket protocol (enforcer/native/fanotify-helper.c), for the
// benchmarks' stand-in helpers: reads commands from each connection, answers STATE (with the state's
// generation) and STATUS, and hands EVENTS connections and ACK sequence numbers to the caller.
import { createServer, type Server, type Socket } from 'node:net';

export interface StandInHooks {
  /** The `reported` count STATUS answers with. */
  reported: () => number;
  /** A connection asked to receive the event stream. */
  onEvents: (c: Socket) => void;
  /** A connection acknowledged events up to `seq`. */
  onAck: (seq: number) => void;
}

/** A server speaking the helper's protocol; `generation()` is the last STATE's. Not yet listening. */
export function standInProtocolServer(hooks: StandInHooks): { server: Server; generation: () => number } {
  let generation = 0;
  const server = createServer((c) => {
    let buf = Buffer.alloc(0);
    c.on('error', () => undefined);
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const cmd = buf.subarray(0, nl).toString('latin1');
        if (cmd.startsWith('STATE ')) {
          const n = Number(cmd.slice(6));
          if (buf.length < nl + 1 + n) return;
          const payload = buf.subarray(nl + 1, nl + 1 + n).toString('latin1');
          generation = Number(/^generation (\d+)$/m.exec(payload)?.[1] ?? 0);
          buf = buf.subarray(nl + 1 + n);
          c.write(`{"t":"applied","generation":${generation}}\n`);
          continue;
        }
        buf = buf.subarray(nl + 1);
        if (cmd === 'STATUS')
          c.write(
            `{"t":"status","generation":${generation},"decisions":0,"cacheHits":0,"reported":${hooks.reported()},"dropped":0,"denied":0,"ignoreMarks":0,"ignoreFlushes":0,"ignoreFailed":0,"ignoreRenamable":0,"ignoreSupported":true,"pid":${process.pid},"workloads":[{"key":"host","mounts":1}]}\n`,
          );
        else if (cmd === 'EVENTS') hooks.onEvents(c);
        else if (cmd.startsWith('ACK ')) hooks.onAck(Number(cmd.slice(4)));
      }
    });
  });
  return { server, generation: () => generation };
}
