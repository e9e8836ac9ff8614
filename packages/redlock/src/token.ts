import { randomFillSync } from 'node:crypto';

/** Bytes of entropy per token (the Redlock page suggests 20 bytes from /dev/urandom). */
export const TOKEN_BYTES = 20;

const POOL_TOKENS = 256;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let offset = pool.length;

/**
 * A fresh random token: 20 bytes from the CSPRNG, base64url (27 characters). Random bytes are
 * drawn in batches of 256 tokens, so the hot path does not pay a CSPRNG call per acquire. Every
 * acquire attempt gets its own token: a retry can never be confused with a leftover of the
 * attempt before it, and no token is ever set twice on a node.
 */
export function newToken(): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const token = pool.toString('base64url', offset, offset + TOKEN_BYTES);
  offset += TOKEN_BYTES;
  return token;
}
