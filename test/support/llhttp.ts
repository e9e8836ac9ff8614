import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Duplex } from 'node:stream';

/**
 * Node's own HTTP/1.1 request parser (llhttp, through the binding `node:http`'s server uses), fed
 * bytes in memory, for the differential tests of the lean reader (lib/server/lock-service/
 * http1-request.ts). `parseAsNode` sets the parser up as Node's server does (`_http_server.js`,
 * connectionListenerInternal: REQUEST, the default 16 KiB header limit, no lenient flags) and
 * applies the server's own rules on top of llhttp's (a 400 for an HTTP/1.1 request without Host;
 * an upgrade Node would not take is still a request). `parseWithServer` feeds the same bytes to a
 * real `node:http` server on an in-memory socket: the slower reference `parseAsNode` is checked
 * against.
 */
const require = createRequire(import.meta.url);

interface ParserBinding {
  new (): Parser;
  REQUEST: number;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kOnExecute: number;
  kLenientNone: number;
}
interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(buf: Buffer): number | (Error & { code?: string; bytesParsed?: number });
  finish(): number | Error;
  close(): void;
  [callback: number]: unknown;
}
const { HTTPParser, methods } = require('_http_common') as { HTTPParser: ParserBinding; methods: string[] };

/** One request as a server sees it: header names as sent, values as the parser gives them. */
export interface ParsedRequest {
  method: string;
  url: string;
  version: string;
  /** [name, value] in order, names as sent. */
  headers: Array<[string, string]>;
  body: Buffer;
  keepAlive: boolean;
  upgrade: boolean;
  /**
   * Answered by Node's server itself, the handler never sees it: 400 (an HTTP/1.1 request without
   * Host; the connection closes after the answer, though requests already in the same read are
   * still handed to the handler) or 417 (an Expect other than 100-continue).
   */
  answeredByNode?: 400 | 417;
}

/**
 * How the bytes end: `clean` (every request complete, nothing pending), `partial` (a request
 * begun and not complete), `refused` (llhttp failed: Node answers 400 and closes; `code` says
 * why), `closed` (the last request said Connection: close: llhttp reads nothing after it, `code`
 * is set when bytes followed), `upgrade` (llhttp stops there).
 */
export type ParseEnd = 'clean' | 'partial' | 'refused' | 'closed' | 'upgrade';

export interface NodeParse {
  requests: ParsedRequest[];
  end: ParseEnd;
  /** llhttp's error code when it failed. */
  code?: string;
  /** A request whose head was read and whose body was not complete (Node's handler already has it). */
  pending?: ParsedRequest;
}

const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** The server's own answer to a request whose head it read (parserOnIncoming), if any. */
function serverAnswer(request: ParsedRequest): 400 | 417 | undefined {
  if (request.version !== '1.1') return undefined;
  const header = (name: string) => request.headers.find(([n]) => n.toLowerCase() === name)?.[1];
  if (header('host') === undefined) return 400;
  const expect = header('expect');
  if (expect !== undefined && !CONTINUE.test(expect)) return 417;
  return undefined;
}

const parser = new HTTPParser();
let requests: ParsedRequest[] = [];
let current: ParsedRequest | null = null;
let body: Buffer[] = [];
let headerParts: string[] = [];
let urlPart = '';
let inMessage = false;

parser[HTTPParser.kOnMessageBegin] = () => {
  inMessage = true;
  headerParts = [];
  urlPart = '';
};
parser[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
  headerParts.push(...headers);
  urlPart += url;
};
parser[HTTPParser.kOnHeadersComplete] = (
  major: number,
  minor: number,
  headers: string[] | undefined,
  method: number,
  url: string | undefined,
  _status: unknown,
  _message: unknown,
  upgrade: boolean,
  keepAlive: boolean,
) => {
  const flat = headers ?? headerParts;
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  current = {
    method: methods[method]!,
    url: url ?? urlPart,
    version: `${major}.${minor}`,
    headers: pairs,
    body: Buffer.alloc(0),
    keepAlive,
    upgrade,
  };
  body = [];
  return 0;
};
parser[HTTPParser.kOnBody] = (chunk: Buffer) => body.push(Buffer.from(chunk));
parser[HTTPParser.kOnMessageComplete] = () => {
  if (current) {
    current.body = Buffer.concat(body);
    requests.push(current);
  }
  current = null;
  inMessage = false;
};
parser[HTTPParser.kOnExecute] = () => undefined;

/** `bytes` as one write to a fresh connection of Node's HTTP server (see the file comment). */
export function parseAsNode(bytes: Buffer): NodeParse {
  requests = [];
  current = null;
  inMessage = false;
  parser.initialize(HTTPParser.REQUEST, {}, 0, HTTPParser.kLenientNone);
  const ret = parser.execute(bytes);
  const out = requests;
  const pending = current as ParsedRequest | null;
  requests = [];
  current = null;
  const code = typeof ret === 'number' ? undefined : (ret.code ?? 'ERROR');
  for (const request of pending ? [...out, pending] : out) {
    const answer = serverAnswer(request);
    if (answer) request.answeredByNode = answer;
  }
  const extra = pending ? { pending } : {};
  const last = out[out.length - 1];
  if (last?.upgrade || pending?.upgrade) return { requests: out, end: 'upgrade', ...extra };
  if (last && !last.keepAlive && !pending) return { requests: out, end: 'closed', ...(code ? { code } : {}) };
  if (code) return { requests: out, end: 'refused', code, ...extra };
  return { requests: out, end: inMessage ? 'partial' : 'clean', ...extra };
}

export interface ServerParse {
  /** Every request the server's handler was given (heads), with its body when it was read to the end. */
  requests: Array<Omit<ParsedRequest, 'body' | 'upgrade' | 'keepAlive'> & { body: Buffer | null }>;
  /** The status lines Node's server wrote itself (a 400 for a parse error or no Host, 431, 417, 100). */
  statuses: number[];
}

/**
 * The same bytes through a real `node:http` server on an in-memory socket (its handler answers
 * 200 once a body is read). Slow (~150 µs a case): the reference `parseAsNode` is checked against.
 */
export function parseWithServer(bytes: Buffer): Promise<ServerParse> {
  return new Promise((resolve) => {
    const state = { seen: [] as ServerParse['requests'], written: '' };
    const socket = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, done) {
        state.written += chunk.toString('latin1');
        done();
      },
    });
    Object.assign(socket, { setTimeout: () => socket, setNoDelay: () => socket, setKeepAlive: () => socket, remoteAddress: '127.0.0.1' });
    socket.on('error', () => undefined);
    SOCKETS.set(socket, state);
    referenceServer().emit('connection', socket);
    socket.push(bytes);
    // Everything Node does with bytes already in memory happens within a few turns of the loop.
    setTimeout(() => {
      socket.destroy();
      SOCKETS.delete(socket);
      const statuses = [...state.written.matchAll(/(?:^|\n)HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((s) => s !== 299);
      resolve({ requests: state.seen, statuses });
    }, 5);
  });
}

const SOCKETS = new Map<object, { seen: ServerParse['requests']; written: string }>();
let reference: Server | null = null;

/** One server for every case (never listening), each case on a socket of its own. */
function referenceServer(): Server {
  reference ??= createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    const headers: Array<[string, string]> = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
    const entry = { method: req.method!, url: req.url!, version: req.httpVersion, headers, body: null as Buffer | null };
    SOCKETS.get(req.socket)?.seen.push(entry);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      entry.body = Buffer.concat(chunks);
      res.writeHead(299).end();
    });
    req.on('error', () => undefined);
  });
  return reference;
}
