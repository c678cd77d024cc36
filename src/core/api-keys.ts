import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, Clock, KeyStore, Tier } from './ports.js';

export const KEY_PREFIX = 'exr_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 base62 characters carry about 190 bits of entropy, well over the 128 the spec asks. */
const RANDOM_CHARS = 32;
/** How much of a key is kept in clear, to tell keys apart in listings and revocations. */
const DISPLAY_CHARS = KEY_PREFIX.length + 8;
const KEY_SHAPE = /^exr_[0-9A-Za-z]{22,64}$/;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const TIERS: readonly Tier[] = ['free', 'pro'];

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Rejection sampling: 248 = 4 × 62, so accepted bytes map to base62 without bias.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** One-shot crypto.hash: about three times faster than a Hash object, and it runs on every request. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Cheap shape check before any lookup: a malformed key is refused like an unknown one. */
export function isWellFormedKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_CHARS);
}

export interface IssuedKey {
  /** The whole key, shown once and never stored. */
  key: string;
  record: ApiKeyRecord;
}

export async function issueApiKey(keys: KeyStore, input: { tier: string; owner: string }, clock: Clock): Promise<IssuedKey> {
  if (!TIERS.includes(input.tier as Tier)) throw new Error(`unknown tier '${input.tier}': use ${TIERS.join(' or ')}`);
  if (!EMAIL_SHAPE.test(input.owner)) throw new Error(`owner must be an e-mail address, got '${input.owner}'`);
  const key = KEY_PREFIX + randomBase62(RANDOM_CHARS);
  const record: ApiKeyRecord = {
    id: randomUUID(),
    prefix: displayPrefix(key),
    tier: input.tier as Tier,
    owner: input.owner,
    createdAt: clock.now().toISOString(),
    revokedAt: null,
  };
  await keys.insert({ ...record, hash: hashApiKey(key) });
  return { key, record };
}

/**
 * The hashes of the well-formed keys presented lately, so that a request costs one lookup instead
 * of a shape check and a SHA-256. The keys are held only in this process's memory, as they are in
 * the requests that bring them; never stored or logged. Made by createDeps, at most `max` keys:
 * past them, the key remembered longest ago goes (a plain Map keeps its entries in that order).
 */
export class PresentedKeyHashes extends Map<string, string> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: string, hash: string): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value!);
    return super.set(key, hash);
  }
}

export function createPresentedKeyHashes(max: number): PresentedKeyHashes {
  return new PresentedKeyHashes(max);
}

const LONGEST_KEY = KEY_PREFIX.length + 64;

function presentedHash(presented: string, hashes: PresentedKeyHashes): string | undefined {
  if (presented.length > LONGEST_KEY) return undefined;
  let hashed = hashes.get(presented);
  if (hashed === undefined) {
    if (!isWellFormedKey(presented)) return undefined;
    hashes.set(presented, (hashed = hashApiKey(presented)));
  }
  return hashed;
}

/** The active key record for a presented key, or null for a malformed, unknown or revoked one. */
export async function authenticateApiKey(keys: KeyStore, presented: string | undefined, hashes: PresentedKeyHashes): Promise<ApiKeyRecord | null> {
  const hashed = presented === undefined ? undefined : presentedHash(presented, hashes);
  if (hashed === undefined) return null;
  const record = await keys.findByHash(hashed);
  return record && record.revokedAt === null ? record : null;
}

/**
 * A key or the start of one as it may be printed: the part `keys list` shows, so that a whole key
 * given to a command (or pasted by mistake) never reaches a terminal, a log or a shell history again.
 */
export function shownKey(text: string): string {
  return text.length > DISPLAY_CHARS ? `${displayPrefix(text)}…` : text;
}

/**
 * Revokes the active keys that `given` names: a whole key (exactly that key, found by its hash) or
 * the start of keys as `keys list` shows it (every active key that starts with it). Messages show
 * at most the listed prefix of what was given.
 */
export async function revokeApiKeys(keys: KeyStore, given: string, clock: Clock): Promise<ApiKeyRecord[]> {
  const at = clock.now().toISOString();
  if (given.length > DISPLAY_CHARS) {
    if (!isWellFormedKey(given)) {
      throw new Error(`'${shownKey(given)}' is neither a whole key nor the start of one as shown by 'keys list' (at most ${DISPLAY_CHARS} characters, e.g. ${KEY_PREFIX}AbC12345)`);
    }
    const revoked = await keys.revokeByHash(hashApiKey(given), at);
    return revoked ? [revoked] : [];
  }
  if (!given.startsWith(KEY_PREFIX)) {
    throw new Error(`'${given}' is not the start of a key: every key starts with ${KEY_PREFIX} (as shown by 'keys list'), e.g. ${KEY_PREFIX}AbC1`);
  }
  if (given.length < KEY_PREFIX.length + 4) {
    throw new Error(`give at least the first ${KEY_PREFIX.length + 4} characters of the key (as shown by 'keys list'), e.g. ${KEY_PREFIX}AbC1`);
  }
  return keys.revokeByPrefix(given, at);
}
