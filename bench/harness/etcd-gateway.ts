/**
 * etcd v3's lock API as its JSON gateway speaks it (etcd 3.4: grpc-gateway under `/v3/`): bytes as
 * standard base64, 64-bit integers (lease IDs) as decimal strings. Only the calls the bench makes:
 * a session lease (`/v3/lease/grant`, `/v3/lease/revoke`), lock and unlock (`/v3/lock/lock`,
 * `/v3/lock/unlock`). Pure functions: the bench's etcd peer (etcd.ts) sends what these build and
 * reads answers with them; test/unit/bench-etcd-gateway.test.ts holds them to etcd's encoding.
 */
export const ETCD_PATHS = Object.freeze({
  grant: '/v3/lease/grant',
  revoke: '/v3/lease/revoke',
  lock: '/v3/lock/lock',
  unlock: '/v3/lock/unlock',
});

/** What the gateway answers with a non-2xx status: `{error, message, code}` (a gRPC status code). */
export class EtcdGatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'EtcdGatewayError';
  }
}

export function toBase64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export function fromBase64(value: string): string {
  return Buffer.from(value, 'base64').toString('utf8');
}

/** A lease ID as the gateway writes and reads it: a decimal string of a positive int64. */
const LEASE_ID = /^[1-9]\d{0,18}$/;

export function leaseGrantRequest(ttlSeconds: number): { TTL: number } {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1)
    throw new RangeError(`a lease TTL is a whole number of seconds ≥ 1, got ${ttlSeconds}`);
  return { TTL: ttlSeconds };
}

function answerError(status: number, body: Record<string, unknown>, what: string): EtcdGatewayError {
  const message =
    typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : JSON.stringify(body).slice(0, 200);
  return new EtcdGatewayError(status, `etcd ${what}: ${status} ${message}`);
}

/** The granted lease's ID (a decimal string: int64 does not fit a JSON number). */
export function parseLeaseGrant(status: number, body: Record<string, unknown>): string {
  if (status !== 200) throw answerError(status, body, 'lease grant');
  const id = body.ID;
  if (typeof id !== 'string' || !LEASE_ID.test(id))
    throw new EtcdGatewayError(status, `etcd lease grant: no lease ID in ${JSON.stringify(body).slice(0, 200)}`);
  return id;
}

export function leaseRevokeRequest(lease: string): { ID: string } {
  if (!LEASE_ID.test(lease)) throw new RangeError(`not a lease ID: ${lease}`);
  return { ID: lease };
}

/** Lock `name` on the session lease: the gateway answers when the lock is held (it waits its turn). */
export function lockRequest(name: string, lease: string): { name: string; lease: string } {
  if (name.length === 0) throw new RangeError('a lock name must not be empty');
  if (!LEASE_ID.test(lease)) throw new RangeError(`not a lease ID: ${lease}`);
  return { name: toBase64(name), lease };
}

/**
 * The held lock's key, base64 as the gateway gave it (unlock takes it back as is). etcd's key is
 * `<name>/<lease ID in hex>`: one that does not start with the name is not this lock.
 */
export function parseLock(status: number, body: Record<string, unknown>, name: string): string {
  if (status !== 200) throw answerError(status, body, 'lock');
  const key = body.key;
  if (typeof key !== 'string' || key.length === 0)
    throw new EtcdGatewayError(status, `etcd lock: no key in ${JSON.stringify(body).slice(0, 200)}`);
  if (!fromBase64(key).startsWith(`${name}/`))
    throw new EtcdGatewayError(status, `etcd lock: key ${fromBase64(key)} is not under ${name}/`);
  return key;
}

export function unlockRequest(key: string): { key: string } {
  if (key.length === 0) throw new RangeError('an unlock needs the key lock answered');
  return { key };
}

/** Unlock answers a header only: a 200 with one is the release. */
export function parseUnlock(status: number, body: Record<string, unknown>): true {
  if (status !== 200) throw answerError(status, body, 'unlock');
  if (typeof body.header !== 'object' || body.header === null)
    throw new EtcdGatewayError(status, `etcd unlock: no header in ${JSON.stringify(body).slice(0, 200)}`);
  return true;
}
