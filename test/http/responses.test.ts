import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { convertAt, parseAmount, type RateQuote } from '../../src/core/rates.js';
import { strongEtag } from '../../src/http/caching.js';
import { createConversionBodies, renderConversion, renderQuote } from '../../src/http/responses.js';

const code = fc.stringMatching(/^[A-Z]{3}$/);
const decimal = fc
  .tuple(fc.stringMatching(/^[0-9]{1,18}$/), fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined }))
  .map(([whole, fraction]) => (fraction === undefined ? whole : `${whole}.${fraction}`));
const rate = fc.tuple(fc.stringMatching(/^[1-9][0-9]{0,5}$/), fc.stringMatching(/^[0-9]{0,8}$/)).map(([w, f]) => (f ? `${w}.${f}` : w));

describe('rendered bodies', () => {
  it('renders a conversion exactly as JSON.stringify would, for any quote and amount', () => {
    fc.assert(
      fc.property(code, code, rate, decimal, fc.oneof(fc.constant('2026-03-05T15:00:00Z'), fc.string()), fc.boolean(), (from, to, rateText, amountText, asOf, stale) => {
        const quote: RateQuote = { pair: from + to, from, to, rate: rateText, asOf, stale };
        const conversion = convertAt(quote, parseAmount(amountText));
        const { amount, result } = conversion;
        assert.equal(renderConversion(conversion), JSON.stringify({ from, to, amount, rate: rateText, result, asOf, stale }));
        JSON.parse(renderConversion(conversion));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps a quote rendered once, with its byte length', () => {
    const quote: RateQuote = { pair: 'EURUSD', from: 'EUR', to: 'USD', rate: '1.1618', asOf: '2026-03-05T15:00:00Z', stale: false };
    const first = renderQuote(quote);
    assert.equal(renderQuote(quote), first);
    assert.equal(first.length, Buffer.byteLength(first.body));
    assert.deepEqual(JSON.parse(first.body), quote);
  });

  it('keeps conversions per quote and amount, within its bound, and nothing for a bad amount', () => {
    const bodyOf = createConversionBodies(3);
    const quote: RateQuote = { pair: 'EURJPY', from: 'EUR', to: 'JPY', rate: '183.0512', asOf: '2026-03-05T15:00:00Z', stale: false };
    const first = bodyOf(quote, '99.95');
    const expected = renderConversion(convertAt(quote, parseAmount('99.95')));
    assert.deepEqual(first, { body: expected, etag: strongEtag(expected), length: Buffer.byteLength(expected) });
    assert.equal(bodyOf(quote, '99.95'), first, 'the same amount is served from what was kept');
    assert.throws(() => bodyOf(quote, '1e5'), { code: 'invalid_amount' });
    // A quote for new rates is a new object: its conversions are its own.
    const moved = { ...quote, rate: '183.1' };
    assert.notEqual(bodyOf(moved, '99.95').body, first.body);
    bodyOf(quote, '1');
    // Three kept (99.95, 99.95 of the moved quote, 1): the fourth starts over.
    bodyOf(quote, '2');
    assert.notEqual(bodyOf(quote, '99.95'), first, 'dropped past the bound');
    assert.deepEqual(bodyOf(quote, '99.95'), first);
  });
});
