/**
 * Large documents are parsed on a worker thread: the same document as in place, the event loop
 * free meanwhile, a bad document's FeedError kept, an abort honoured.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { FeedError } from '../../src/core/errors.js';
import { ECB_HISTORY_MAX_BYTES, parseEcbDocument } from '../../src/providers/ecb-format.js';
import { parseNbuRates } from '../../src/providers/nbu.js';
import { OFF_THREAD_FROM, parseOffThread } from '../../src/providers/off-thread.js';
import { ECB_CSV, SHARED_DATA } from '../support/data.js';

const CENTRAL_BANKS = join(SHARED_DATA, 'central-banks');

/** Turns of the event loop while `work` runs. */
async function turnsDuring<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const turn = (): void => {
    if (done) return;
    turns += 1;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { value: await work, turns };
  } finally {
    done = true;
  }
}

describe('parseOffThread', () => {
  const csv = readFileSync(ECB_CSV);

  it('parses a large document on a worker thread into the same document, the event loop turning meanwhile', async () => {
    assert.ok(csv.length >= OFF_THREAD_FROM);
    const zip = zipSync({ 'eurofxref-hist.csv': csv });
    for (const bytes of [csv, zip]) {
      const { value, turns } = await turnsDuring(parseOffThread('ecb', parseEcbDocument, [bytes, ECB_HISTORY_MAX_BYTES]));
      assert.deepEqual(value, parseEcbDocument(bytes, ECB_HISTORY_MAX_BYTES));
      assert.ok(turns > 0, 'the event loop turned while the document was parsed');
    }
  });

  it("parses a bank's large text document the same way: the NBU's recorded answer and the same rows a month later, in one", async () => {
    // The recorded answer (16 days of March) and the same rows dated April, as one answer of 32 days would hold them.
    const recorded = readFileSync(join(CENTRAL_BANKS, 'nbu', '01.json'), 'utf8').trim();
    const april = recorded.replace(/"exchangedate":"(\d{2})\.03\.2026"/g, '"exchangedate":"$1.04.2026"');
    const text = `${recorded.slice(0, -1)},${april.slice(1)}`;
    assert.ok(text.length >= OFF_THREAD_FROM, `${text.length} characters`);
    const inPlace = parseNbuRates(text);
    assert.equal(inPlace.days.length, 32);
    const offThread = await turnsDuring(parseOffThread('nbu', parseNbuRates, [text]));
    assert.deepEqual(offThread.value, inPlace);
    assert.ok(offThread.turns > 0, 'the event loop turned while the document was parsed');
  });

  it('parses a small document in place', async () => {
    const small = Buffer.from('Date,USD,\n2026-02-11,1.1870,\n');
    const { value, turns } = await turnsDuring(parseOffThread('ecb', parseEcbDocument, [small, 1024]));
    assert.equal(value.days[0]!.rates['USD'], '1.1870');
    assert.equal(turns, 0, 'no turn of the event loop: parsed before the promise settled');
  });

  it("keeps a bad document's FeedError and its message", async () => {
    const bad = Buffer.concat([csv.subarray(0, OFF_THREAD_FROM), Buffer.from('\n2026-02-12,not-a-rate,\n')]);
    const inPlace = (() => {
      try {
        parseEcbDocument(bad, ECB_HISTORY_MAX_BYTES);
      } catch (error) {
        return error as Error;
      }
      return assert.fail('the bad document parsed');
    })();
    await assert.rejects(parseOffThread('ecb', parseEcbDocument, [bad, ECB_HISTORY_MAX_BYTES]), (error: unknown) => error instanceof FeedError && error.message === inPlace.message);
  });

  it('gives up the parse when the caller aborts', async () => {
    const controller = new AbortController();
    const parsing = parseOffThread('ecb', parseEcbDocument, [csv, ECB_HISTORY_MAX_BYTES], controller.signal);
    controller.abort(new Error('stopping'));
    await assert.rejects(parsing, /stopping/);
    const aborted = AbortSignal.abort(new Error('stopped before'));
    await assert.rejects(parseOffThread('ecb', parseEcbDocument, [csv, ECB_HISTORY_MAX_BYTES], aborted), /stopped before/);
  });
});
