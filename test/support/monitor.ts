import { connect, type Socket } from 'node:net';
import { encodeCommand } from '@/chaos/harness/resp';

/** One command a node ran, as MONITOR reports it. */
export interface MonitoredCommand {
  /** `lua` for a command a script ran, else the client's address. */
  readonly source: string;
  readonly args: readonly string[];
}

/**
 * MONITOR on a socket of its own: every command the node runs, in the order it runs them.
 *
 * Not ioredis's `monitor()`: when the feed's first line arrives in the same read as MONITOR's `+OK`
 * (another client busy on the node at that moment, e.g. a new connection loading its scripts),
 * ioredis takes it for a reply nobody waits for and throws "Command queue state error" from its
 * socket handler, which fails the test file. Here every line after `+OK` is the feed.
 */
export class MonitorFeed {
  readonly commands: MonitoredCommand[] = [];
  private readonly socket: Socket;
  private readonly listeners = new Set<() => void>();
  private rest = '';

  private constructor(socket: Socket) {
    this.socket = socket;
  }

  /** Connect to `url` (redis://[:password@]host:port), send MONITOR, resolve once it is on. */
  static open(url: string): Promise<MonitorFeed> {
    const { hostname, port, password } = new URL(url);
    const socket = connect(Number(port), hostname);
    const feed = new MonitorFeed(socket);
    return new Promise((resolve, reject) => {
      let on = false;
      let answers = password ? 2 : 1;
      socket.once('error', reject);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const lines = (feed.rest + chunk).split('\r\n');
        feed.rest = lines.pop()!;
        for (const line of lines) {
          if (on) feed.push(line);
          else if (line.startsWith('-')) reject(new Error(`MONITOR refused: ${line}`));
          else if (--answers === 0) {
            on = true;
            resolve(feed);
          }
        }
      });
      if (password) socket.write(encodeCommand([Buffer.from('AUTH'), Buffer.from(decodeURIComponent(password))]));
      socket.write(encodeCommand([Buffer.from('MONITOR')]));
    });
  }

  /**
   * Resolve once the feed shows `ECHO <marker>` sent through `echo` on the same node: MONITOR
   * reports in the order the node runs commands, so by then it has shown every command before it.
   * Resolves with the source (address) the ECHO came from, to tell that connection's commands apart.
   */
  async drain(echo: (marker: string) => Promise<unknown>, timeoutMs = 5_000): Promise<string> {
    const marker = `monitor-drain-${Math.random().toString(36).slice(2)}`;
    const seen = () => this.commands.some((c) => c.args[0]?.toUpperCase() === 'ECHO' && c.args[1] === marker);
    const shown = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`MONITOR did not show ${marker} within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (!seen()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
    await echo(marker);
    await shown;
    return this.commands.find((c) => c.args[0]?.toUpperCase() === 'ECHO' && c.args[1] === marker)!.source;
  }

  close(): void {
    this.socket.destroy();
  }

  private push(line: string): void {
    const command = parseMonitorLine(line);
    if (!command) return;
    this.commands.push(command);
    for (const listener of [...this.listeners]) listener();
  }
}

/** `+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"` → { source: '127.0.0.1:60866', args: ['keys', '*'] }. */
export function parseMonitorLine(line: string): MonitoredCommand | null {
  const head = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line);
  if (!head) return null;
  const args: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] !== '"') {
      i++;
      continue;
    }
    let arg = '';
    for (i++; i < line.length && line[i] !== '"'; i++) {
      if (line[i] !== '\\') {
        arg += line[i];
        continue;
      }
      const next = line[++i];
      if (next === 'x') {
        arg += String.fromCharCode(parseInt(line.slice(i + 1, i + 3), 16));
        i += 2;
      } else arg += ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[next!] ?? next;
    }
    args.push(arg);
    i++;
  }
  return { source: head[1]!, args };
}
