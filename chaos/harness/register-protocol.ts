/**
 * The register's line protocol on 127.0.0.1 (one request per line, replies in order):
 *
 *   W <resource> <fence | -> <lock>\n   →   A\n (accepted)  |  R <highest>\n (refused)
 *
 * `f:` resources are fenced registers: a write is accepted only with a fence ≥ the highest fence
 * accepted for that resource. `u:` resources are unfenced: every write is accepted (and recorded).
 */

export interface WriteRequest {
  resource: string;
  fence: number | null;
  lock: string;
}

export function encodeWrite(req: WriteRequest): string {
  if (/\s/.test(req.resource) || /\s/.test(req.lock)) throw new RangeError('register: resource and lock ids must not contain spaces');
  return `W ${req.resource} ${req.fence === null ? '-' : String(req.fence)} ${req.lock}\n`;
}

export function parseWrite(line: string): WriteRequest | null {
  const parts = line.split(' ');
  if (parts.length !== 4 || parts[0] !== 'W') return null;
  const fence = parts[2] === '-' ? null : Number(parts[2]);
  if (fence !== null && !Number.isSafeInteger(fence)) return null;
  return { resource: parts[1]!, fence, lock: parts[3]! };
}

/** The register's decision: accept when unfenced, else when fence ≥ highest (refuse a missing fence). */
export function decideWrite(fenced: boolean, fence: number | null, highest: number | undefined): boolean {
  if (!fenced) return true;
  if (fence === null) return false;
  return highest === undefined || fence >= highest;
}
