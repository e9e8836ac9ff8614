import { InvalidArgumentError } from './errors';
import { describe } from './settings';

import { LIMITS, RESERVED_METADATA } from './vocabulary';

export { LIMITS, RESERVED_METADATA } from './vocabulary';

/** `resources` as a frozen array of distinct, non-empty names of at most 512 bytes. */
export function checkResources(input: unknown): readonly string[] {
  if (typeof input === 'string') {
    checkResource(input, 'resources');
    return Object.freeze([input]);
  }
  if (!Array.isArray(input)) throw new InvalidArgumentError('resources', `must be a string or an array of strings, got ${describe(input)}`);
  if (input.length === 0) throw new InvalidArgumentError('resources', 'must name at least one resource');
  if (input.length > LIMITS.maxResources)
    throw new InvalidArgumentError('resources', `at most ${LIMITS.maxResources} per lock, got ${input.length}`);
  for (let i = 0; i < input.length; i++) checkResource(input[i], `resources[${i}]`);
  if (input.length > 1 && new Set(input).size !== input.length) throw new InvalidArgumentError('resources', 'must not repeat a resource');
  return Object.freeze(input.slice() as string[]);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkResource(value: unknown, name: string): void {
  if (typeof value !== 'string') throw new InvalidArgumentError(name, `must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new InvalidArgumentError(name, 'must not be empty');
  // A lone surrogate has no UTF-8 form: Buffer writes U+FFFD for it, so two different names
  // would share one key.
  if (LONE_SURROGATE.test(value)) throw new InvalidArgumentError(name, 'must be well-formed Unicode (it has a lone surrogate)');
  // Fast path: a string of at most 128 UTF-16 units is at most 512 UTF-8 bytes.
  if (value.length > LIMITS.maxResourceBytes / 4 && Buffer.byteLength(value, 'utf8') > LIMITS.maxResourceBytes) {
    throw new InvalidArgumentError(
      name,
      `must be at most ${LIMITS.maxResourceBytes} bytes of UTF-8, got ${Buffer.byteLength(value, 'utf8')}`,
    );
  }
}

/** A ttl: a whole number of ms in [1, maxTtlMs]. */
export function checkTtl(value: unknown, maxTtlMs: number, name = 'ttlMs'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new InvalidArgumentError(name, `must be a positive whole number of milliseconds, got ${describe(value)}`);
  }
  if (value > maxTtlMs)
    throw new InvalidArgumentError(name, `must be at most maxTtlMs (${maxTtlMs}, the cluster's lease ceiling), got ${value}`);
  return value;
}

export function checkToken(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > LIMITS.maxTokenChars) {
    throw new InvalidArgumentError('token', `must be a non-empty string of at most ${LIMITS.maxTokenChars} characters`);
  }
  // A lock value is `<token> <metadata>` (value.ts): a token never holds a space.
  if (value.includes(' ')) throw new InvalidArgumentError('token', 'must not contain a space (a lock value is "<token> <metadata>")');
  return value;
}

/**
 * Caller metadata as field/value pairs: at most 16 fields, names 1–64 characters, values strings
 * of at most 256 characters, none of the reserved fields.
 */
export function checkMetadata(input: unknown): string[] {
  if (input === undefined) return [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidArgumentError('metadata', `must be an object of strings, got ${describe(input)}`);
  }
  const entries = Object.entries(input);
  if (entries.length > LIMITS.maxMetadataFields) {
    throw new InvalidArgumentError('metadata', `at most ${LIMITS.maxMetadataFields} fields, got ${entries.length}`);
  }
  const pairs: string[] = [];
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > LIMITS.maxMetadataKeyChars) {
      throw new InvalidArgumentError(
        'metadata',
        `field names must have 1 to ${LIMITS.maxMetadataKeyChars} characters, got ${describe(key)}`,
      );
    }
    if (RESERVED_METADATA.includes(key)) throw new InvalidArgumentError(`metadata.${key}`, 'is written by the lock core and cannot be set');
    if (typeof value !== 'string') throw new InvalidArgumentError(`metadata.${key}`, `must be a string, got ${describe(value)}`);
    if (value.length > LIMITS.maxMetadataValueChars) {
      throw new InvalidArgumentError(`metadata.${key}`, `must be at most ${LIMITS.maxMetadataValueChars} characters, got ${value.length}`);
    }
    pairs.push(key, value);
  }
  return pairs;
}
