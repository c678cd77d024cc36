import type { RedisClient } from './connection.js';

// KEYS[1] this instance's receipt, KEYS[2..] counters, one per entry; ARGV[1] the receipt's
// lifetime, ARGV[2] the sequence number of the call's first request (the others follow it one by
// one, entry after entry), ARGV[3] the entries in the order of KEYS, each "<requests> <limit> ":
// requests of one counter with one limit. An entry's requests are decided in order, each as if
// alone (as many counted as the limit leaves room for, the rest refused), so a call decides exactly
// what the same requests sent one by one would have. Returns a word per entry: the counter's count
// before it, from which the caller works out each request's answer, or "m": counter missing,
// nothing counted. The receipt keeps the call and its answer ("<first>|<entries>|<answer>"), which
// tells a later reconcile whether a call whose answer was lost ran after all, and what it counted.
// The entries travel as one argument and the answer as one string: one value each way whatever
// the number of requests.
const CONSUME = `
local out, k = {}, 1
for ns, ls in string.gmatch(ARGV[3], '(%d+) (%d+) ') do
  k = k + 1
  local v = redis.call('GET', KEYS[k])
  if v then
    local room = tonumber(ls) - tonumber(v)
    if room >= tonumber(ns) then
      redis.call('INCRBY', KEYS[k], ns)
    elseif room > 0 then
      redis.call('INCRBY', KEYS[k], room)
    end
    out[k - 1] = v
  else
    out[k - 1] = 'm'
  end
end
local answer = table.concat(out, ' ')
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. answer, 'EX', ARGV[1])
return answer
`;

/** A request to count: its counter's key in Redis and its limit. */
export interface CountRequest {
  counter: string;
  limit: number;
}

/** A request's outcome in Redis: counted or refused, or its counter is missing (nothing counted). */
export type CountOutcome = { allowed: boolean; used: number } | 'missing';

/** One call of the script, ready to send: what it carries, and how to read its answer. */
export interface ConsumeCall {
  /** The counters' keys, one per entry, after the receipt's. */
  keys: string[];
  /** ARGV[2] and ARGV[3]. */
  first: number;
  entries: string;
  /** Each request's sequence number, in the order of the requests given. */
  seqs: number[];
  /** Each request's outcome, in the order of the requests given; throws on an answer of another shape. */
  read(answer: unknown): CountOutcome[];
}

/**
 * Plans one call for `requests`, numbered from `first`: the requests of one counter and limit form
 * one entry, at the place of the first of them (within a call they are concurrent, so any order of
 * them is one they could have arrived in).
 */
export function consumeCall(requests: readonly CountRequest[], first: number): ConsumeCall {
  interface Entry {
    counter: string;
    limit: number;
    indices: number[];
  }
  const entries: Entry[] = [];
  /** A counter's entries, one per limit (almost always one). */
  const byCounter = new Map<string, Entry[]>();
  for (let index = 0; index < requests.length; index++) {
    const { counter } = requests[index]!;
    // Sent as digits: a limit beyond 2^53 counts as 2^53 (the config admits any integer).
    const limit = Math.min(requests[index]!.limit, Number.MAX_SAFE_INTEGER);
    let ofCounter = byCounter.get(counter);
    if (!ofCounter) byCounter.set(counter, (ofCounter = []));
    let entry = ofCounter.find((e) => e.limit === limit);
    if (!entry) {
      entry = { counter, limit, indices: [] };
      ofCounter.push(entry);
      entries.push(entry);
    }
    entry.indices.push(index);
  }
  const seqs: number[] = [];
  let seq = first;
  let args = '';
  for (const entry of entries) {
    for (const index of entry.indices) seqs[index] = seq++;
    args += `${entry.indices.length} ${entry.limit} `;
  }
  return {
    keys: entries.map((entry) => entry.counter),
    first,
    entries: args,
    seqs,
    read(answer) {
      const words = typeof answer === 'string' && ANSWER.test(answer) ? answer.split(' ') : [];
      if (words.length !== entries.length) throw new Error(`unexpected answer from the quota script: ${String(answer).slice(0, 80)}`);
      const outcomes: CountOutcome[] = [];
      for (let e = 0; e < entries.length; e++) {
        const { indices, limit } = entries[e]!;
        const word = words[e]!;
        if (word === 'm') {
          for (const index of indices) outcomes[index] = 'missing';
          continue;
        }
        const before = Number(word);
        const taken = Math.max(0, Math.min(indices.length, limit - before));
        for (let i = 0; i < indices.length; i++) outcomes[indices[i]!] = i < taken ? { allowed: true, used: before + i + 1 } : { allowed: false, used: before + taken };
      }
      return outcomes;
    },
  };
}

/** The script's answer: a word per entry, a count or "m". */
const ANSWER = /^(?:\d+|m)(?: (?:\d+|m))*$/;

/** The script as a command of the client: ioredis sends EVALSHA and loads the script where it is missing. */
interface ConsumeScript {
  exratesConsumeBatch(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<unknown>;
}

/** Sends a planned call, leaving its receipt at `receipt` for `lifetimeSeconds`; resolves the script's raw answer. */
export function sendConsumeCall(redis: RedisClient, receipt: string, call: ConsumeCall, lifetimeSeconds: number): Promise<unknown> {
  const scripted = redis as RedisClient & Partial<ConsumeScript>;
  if (!scripted.exratesConsumeBatch) redis.defineCommand('exratesConsumeBatch', { lua: CONSUME });
  return (scripted as RedisClient & ConsumeScript).exratesConsumeBatch(call.keys.length + 1, receipt, ...call.keys, lifetimeSeconds, call.first, call.entries);
}

/**
 * How many of `seqs` a call counted, by the receipt the script left ("<first>|<entries>|<answer>"):
 * none when the receipt is of another call (the lost one never ran) or of none.
 */
export function countedByReceipt(receipt: string | null, seqs: readonly number[]): number {
  if (receipt === null || seqs.length === 0) return 0;
  const [firstText, entriesText, answerText] = receipt.split('|');
  const words = (text: string | undefined) => (text ?? '').split(' ').filter((word) => word !== '');
  const entries = words(entriesText);
  const answer = words(answerText);
  let seq = Number(firstText);
  let counted = 0;
  for (let i = 0; i < answer.length; i++) {
    const requests = Number(entries[2 * i]);
    const limit = Number(entries[2 * i + 1]);
    const before = answer[i] === 'm' ? undefined : Number(answer[i]);
    const taken = before === undefined ? 0 : Math.max(0, Math.min(requests, limit - before));
    for (const s of seqs) if (s >= seq && s < seq + taken) counted += 1;
    seq += requests;
  }
  return counted;
}
