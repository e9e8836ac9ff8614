/**
 * A V8 CPU profile (`.cpuprofile`, as the inspector's Profiler.stop and `node --cpu-prof` write it)
 * summarised by area of the lock service's request path: each sample's time goes to the innermost
 * frame of its stack that names an area (walking from the leaf to the root: a builtin without a
 * file, such as JSON.parse, counts for the code that called it). Pure: bench/profile-http.ts reads
 * the file, test/unit/bench-cpu-profile.test.ts holds the arithmetic.
 */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber?: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs before each sample. */
  timeDeltas: number[];
}

/** The areas, in the order a frame is tested against them (the first that matches names it). */
export const AREAS: readonly { area: string; test(frame: CallFrame): boolean }[] = [
  { area: 'idle (waiting for the network)', test: (f) => f.functionName === '(idle)' },
  { area: 'garbage collection', test: (f) => f.functionName === '(garbage collector)' },
  {
    area: 'socket writes (to clients and masters)',
    // By name: stream_base_commons also holds the read path (onStreamRead), which is no write.
    test: (f) =>
      /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString|writeGeneric|writevGeneric|handleWriteReq)$/.test(
        f.functionName,
      ),
  },
  { area: 'auth and quotas', test: (f) => /lib\/server\/(auth|quotas)\/|lib\/server\/auth-service|internal\/crypto\//.test(f.url) },
  { area: 'JSON and zod', test: (f) => /node_modules\/zod\/|lib\/api\/|request-checks|zod-message/.test(f.url) },
  {
    area: 'HTTP parse and answer',
    test: (f) =>
      /lock-service\/(http1-request|lean-connection|departure-probe)|lib\/server\/http\/|node:_http_|_http_(server|common|incoming|outgoing)/.test(
        f.url,
      ) || /^(parserOnHeadersComplete|parserOnBody|parserOnMessageComplete|execute)$/.test(f.functionName),
  },
  { area: 'lock core (packages/redlock)', test: (f) => /packages\/redlock\/src\//.test(f.url) },
  {
    area: 'lock history, events, metrics',
    test: (f) => /lib\/server\/(lock-history|events)\/|lib\/server\/(metrics|history|grants-seen|lock-index-service)\.ts/.test(f.url),
  },
  { area: 'lock-service handler', test: (f) => /lib\/server\/lock-service\//.test(f.url) },
  { area: 'ioredis and parser', test: (f) => /node_modules\/(ioredis|redis-parser)\//.test(f.url) },
  { area: 'Next.js', test: (f) => /node_modules\/next\//.test(f.url) },
  { area: 'native, not attributed ((program))', test: (f) => f.functionName === '(program)' },
];
/**
 * Node's own JavaScript (node:… files) names no area of its own where an area's frame is below it
 * on the stack (Buffer.from called by the lean reader counts for the reader); samples with only
 * Node's frames (the event loop, timers, promise jobs, socket reads) count as Node.
 */
export const NODE = 'socket reads and the event loop (Node)';
export const OTHER = 'other';
const isNode = (f: CallFrame) => /^node:|^internal\//.test(f.url);

export interface ProfileSummary {
  /** µs of samples in the profile (busy and idle). */
  totalUs: number;
  /** µs by area, largest first. */
  areas: { area: string; us: number }[];
  /** The frames with the most self time. */
  top: { name: string; us: number }[];
}

/** Each sample's duration: the time until the next sample (the last one gets the mean). */
function durations(profile: CpuProfile): number[] {
  const d = profile.timeDeltas;
  const n = profile.samples.length;
  const mean = n > 1 ? d.slice(1).reduce((a, b) => a + b, 0) / (n - 1) : 0;
  return profile.samples.map((_, i) => (i + 1 < n ? Math.max(0, d[i + 1]!) : mean));
}

function frameName(f: CallFrame): string {
  const file = f.url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^file:\/\/.*?\/(lib|packages|scripts)\//, '$1/');
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${(f.lineNumber ?? 0) + 1}` : ''}`;
}

export function summariseProfile(profile: CpuProfile, topCount = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areaOf = new Map<number, string | null>();
  /** The innermost area named on the stack from `id` up, or null. */
  const named = (id: number): string | null => {
    const known = areaOf.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)?.callFrame;
    const own = frame ? AREAS.find((a) => a.test(frame))?.area : undefined;
    const up = parent.get(id);
    const area = own ?? (up === undefined ? null : named(up));
    areaOf.set(id, area);
    return area;
  };
  const hasNodeFrame = (id: number | undefined): boolean => {
    for (let at = id; at !== undefined; at = parent.get(at)) if (isNode(byId.get(at)!.callFrame)) return true;
    return false;
  };
  const classify = (id: number): string => named(id) ?? (hasNodeFrame(id) ? NODE : OTHER);
  const areaUs = new Map<string, number>();
  const selfUs = new Map<string, number>();
  const times = durations(profile);
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const us = times[i]!;
    totalUs += us;
    const area = classify(id);
    areaUs.set(area, (areaUs.get(area) ?? 0) + us);
    const frame = byId.get(id)?.callFrame;
    const name = frame ? frameName(frame) : `node ${id}`;
    selfUs.set(name, (selfUs.get(name) ?? 0) + us);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    totalUs,
    areas: sorted(areaUs).map(([area, us]) => ({ area, us })),
    top: sorted(selfUs)
      .slice(0, topCount)
      .map(([name, us]) => ({ name, us })),
  };
}
