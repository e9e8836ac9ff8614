import { describe, expect, it } from 'vitest';
import {
  EtcdGatewayError,
  fromBase64,
  leaseGrantRequest,
  leaseRevokeRequest,
  lockRequest,
  parseLeaseGrant,
  parseLock,
  parseUnlock,
  unlockRequest,
} from '../../bench/harness/etcd-gateway';

// Answers as etcd 3.4.23's gateway wrote them (Debian etcd-server, one member on 127.0.0.1).
const HEADER = { cluster_id: '15118495548433857066', member_id: '13668033151171901709', revision: '2', raft_term: '2' };
const GRANT = { header: HEADER, ID: '4111120321599130118', TTL: '30' };
const LOCKED = { header: HEADER, key: 'cmVzMS8zOTBkYTIyNjlkY2U0YTA2' };
const BAD_BASE64 = { error: 'illegal base64 data at input byte 0', message: 'illegal base64 data at input byte 0', code: 3 };

describe('the bench’s etcd v3 gateway encoding', () => {
  it('asks for a lock by its name in standard base64 (UTF-8) on the lease ID as a decimal string', () => {
    expect(lockRequest('res1', '4111120321599130118')).toEqual({ name: 'cmVzMQ==', lease: '4111120321599130118' });
    expect(fromBase64(lockRequest('verrou-é/1', '7').name)).toBe('verrou-é/1');
    expect(() => lockRequest('', '7')).toThrow(RangeError);
    expect(() => lockRequest('x', '0')).toThrow(RangeError);
    expect(() => lockRequest('x', '12a')).toThrow(RangeError);
  });

  it('reads the lease ID as the string the gateway writes (an int64 does not fit a JSON number)', () => {
    expect(leaseGrantRequest(60)).toEqual({ TTL: 60 });
    expect(() => leaseGrantRequest(0)).toThrow(RangeError);
    expect(() => leaseGrantRequest(1.5)).toThrow(RangeError);
    expect(parseLeaseGrant(200, GRANT)).toBe('4111120321599130118');
    expect(() => parseLeaseGrant(200, { ...GRANT, ID: 4111120321599130118 })).toThrow(EtcdGatewayError);
    expect(() => parseLeaseGrant(200, { header: HEADER })).toThrow(/no lease ID/);
    expect(leaseRevokeRequest('4111120321599130118')).toEqual({ ID: '4111120321599130118' });
  });

  it('takes the held key as given, and only when it lies under the name asked for', () => {
    const key = parseLock(200, LOCKED, 'res1');
    expect(key).toBe(LOCKED.key);
    // etcd's lock key is <name>/<lease ID in hex>.
    expect(fromBase64(key)).toBe(`res1/${BigInt('4111120321599130118').toString(16)}`);
    expect(unlockRequest(key)).toEqual({ key: LOCKED.key });
    expect(() => parseLock(200, LOCKED, 'res')).toThrow(/not under res\//);
    expect(() => parseLock(200, { header: HEADER }, 'res1')).toThrow(/no key/);
    expect(() => unlockRequest('')).toThrow(RangeError);
  });

  it('turns an error answer into a typed error carrying the status and etcd’s message', () => {
    let caught: unknown;
    try {
      parseLock(400, BAD_BASE64, 'res1');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EtcdGatewayError);
    expect((caught as EtcdGatewayError).status).toBe(400);
    expect((caught as Error).message).toBe('etcd lock: 400 illegal base64 data at input byte 0');
    expect(() => parseLeaseGrant(503, { error: 'etcdserver: too many requests' })).toThrow(
      'etcd lease grant: 503 etcdserver: too many requests',
    );
  });

  it('takes an unlock as done on a 200 with a header only', () => {
    expect(parseUnlock(200, { header: HEADER })).toBe(true);
    expect(() => parseUnlock(200, {})).toThrow(/no header/);
    expect(() => parseUnlock(404, { message: 'not found', code: 5 })).toThrow('etcd unlock: 404 not found');
  });
});
