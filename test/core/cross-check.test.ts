import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crossCheck, differsByMore, median, NEARBY_DAYS, parsePercent, providerCrossCheck } from '../../src/core/cross-check.js';
import { addDays } from '../../src/core/time.js';
import { buildProviderRates, rateTextOn, type ProviderRates } from '../../src/core/rate-index.js';
import { D, formatRate } from '../e2e/independent.js';

const DAY = '2026-03-05';
const r = (num: bigint, den = 1n) => ({ num, den });

/** One provider's numbers on DAY (and, when given, on other days). */
function provider(id: string, base: string, rates: Record<string, string>, day = DAY): ProviderRates {
  const quotes = Object.entries(rates).map(([quote, rate]) => ({ provider: id, base, quote, day, asOf: `${day}T00:00:00Z`, rate }));
  return buildProviderRates(id, base, quotes);
}

describe('exact comparison', () => {
  it('the median of an odd count is the middle value; of an even count, the exact mean of the two middle ones', () => {
    assert.deepEqual(median([r(3n), r(1n), r(2n)]), r(2n));
    const m = median([r(1n, 3n), r(1n, 2n)]);
    // (1/3 + 1/2) / 2 = 5/12
    assert.equal(m.num * 12n, 5n * m.den);
  });

  it('"more than" the threshold is strict, at the exact boundary', () => {
    const two = parsePercent('2');
    assert.equal(differsByMore(r(102n), r(100n), two), false);
    assert.equal(differsByMore(r(98n), r(100n), two), false);
    assert.equal(differsByMore(r(10201n, 100n), r(100n), two), true);
    assert.equal(differsByMore(r(9799n, 100n), r(100n), two), true);
    // 0.5 %: 100.5 is on the boundary, 100.5000001 beyond it.
    assert.equal(differsByMore(r(1005n, 10n), r(100n), parsePercent('0.5')), false);
    assert.equal(differsByMore(r(1005000001n, 10000000n), r(100n), parsePercent('0.5')), true);
  });

  it('refuses a threshold that is not a positive plain decimal', () => {
    for (const text of ['0', '-1', '1e2', '', 'two']) assert.throws(() => parsePercent(text), RangeError, text);
  });
});

describe('crossCheck', () => {
  // Zlotys per dollar 3.7123 (NBP); the others' dollars per zloty, each through its own base.
  const ecb = provider('ecb', 'EUR', { USD: '1.1612', PLN: '4.3107' });
  const cnb = provider('cnb', 'CZK', { USD: '1/20.98', PLN: '1/5.683' });
  const nbu = provider('nbu', 'UAH', { USD: '1/41.5', PLN: '1/11.18' });
  const boi = provider('boi', 'ILS', { USD: '1/3.072', PLN: '1/0.8277' });

  it('passes numbers that agree within the threshold, and names every provider that had something to compare', () => {
    const nbp = provider('nbp', 'PLN', { USD: '1/3.7123' });
    const check = crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('2'));
    assert.deepEqual(check.findings, []);
    assert.deepEqual([...check.compared].sort(), ['boi', 'cnb', 'ecb', 'nbp', 'nbu']);
    assert.deepEqual(providerCrossCheck(check, 'nbp'), { state: 'agrees', outliers: [] });
  });

  it('flags a number published ×1000 and sets it aside when at least three others agree', () => {
    const nbp = provider('nbp', 'PLN', { USD: '1/3712.3' });
    const check = crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('2'));
    const own = check.findings.filter((f) => f.provider === 'nbp');
    assert.equal(own.length, 1);
    const [f] = own;
    assert.equal(f!.currency, 'USD');
    assert.equal(f!.day, DAY);
    assert.equal(f!.base, 'PLN');
    assert.equal(f!.rate, '1/3712.3');
    assert.deepEqual(f!.others, ['boi', 'cnb', 'ecb', 'nbu']);
    assert.equal(f!.agreeing, 4);
    assert.equal(f!.setAside, true);
    // Dollars per zloty: ecb 1.1612/4.3107, cnb 5.683/20.98, nbu 11.18/41.5, boi 0.8277/3.072; the
    // median of four is the mean of the middle two (decimal.js, at 40 digits, then 8 significant).
    const others = [new D('1.1612').div('4.3107'), new D('5.683').div('20.98'), new D('11.18').div('41.5'), new D('0.8277').div('3.072')].sort((x, y) => x.cmp(y));
    assert.equal(f!.median, formatRate(others[1]!.add(others[2]!).div(2)));
    assert.equal(check.setAside('nbp', 'USD', DAY), true);
    assert.equal(check.setAside('nbp', 'USD', '2026-03-04'), false);
    // Its zloty is its base (1): nothing else of it is flagged, and the others agree with each other.
    assert.deepEqual(
      check.findings.filter((x) => x.provider !== 'nbp'),
      [],
    );
    assert.equal(providerCrossCheck(check, 'nbp').state, 'disagrees');
  });

  it('flags an inverted number (published the other way round)', () => {
    // 0.2694 zlotys per dollar: the dollars per zloty the bank meant.
    const nbp = provider('nbp', 'PLN', { USD: '1/0.2694' });
    const [f] = crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('2')).findings;
    assert.equal(f!.provider, 'nbp');
    assert.equal(f!.setAside, true);
  });

  it('with only two others, flags the number but does not set it aside', () => {
    const nbp = provider('nbp', 'PLN', { USD: '1/3712.3' });
    const check = crossCheck([nbp, ecb, cnb], parsePercent('2'));
    const own = check.findings.filter((f) => f.provider === 'nbp');
    assert.equal(own.length, 1);
    assert.equal(own[0]!.agreeing, 2);
    assert.equal(own[0]!.setAside, false);
    assert.equal(check.setAside('nbp', 'USD', DAY), false);
  });

  it('compares only numbers of the same day', () => {
    const nbp = provider('nbp', 'PLN', { USD: '1/3712.3' }, '2026-03-04');
    const check = crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('2'));
    assert.deepEqual(check.findings, []);
    assert.equal(providerCrossCheck(check, 'nbp').state, 'unchecked');
  });

  it('a wider threshold passes what a narrower one flags', () => {
    // 3.80 zlotys per dollar: 2.4 % above 3.7123.
    const nbp = provider('nbp', 'PLN', { USD: '1/3.80' });
    assert.equal(crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('2')).findings.length, 1);
    assert.deepEqual(crossCheck([nbp, ecb, cnb, nbu, boi], parsePercent('3')).findings, []);
  });

  it('decides a number at the threshold exactly: 2 % off is not flagged, a hair more is', () => {
    const others = ['a', 'b', 'c'].map((id) => provider(id, 'EUR', { USD: '1.1000' }));
    const at = provider('own', 'EUR', { USD: '1.122' });
    const beyond = provider('own', 'EUR', { USD: '1.12200001' });
    const below = provider('own', 'EUR', { USD: '1.078' });
    const under = provider('own', 'EUR', { USD: '1.07799999' });
    const flagged = (own: ProviderRates) => crossCheck([own, ...others], parsePercent('2')).findings.some((f) => f.provider === 'own');
    assert.equal(flagged(at), false);
    assert.equal(flagged(beyond), true);
    assert.equal(flagged(below), false);
    assert.equal(flagged(under), true);
  });
});

describe('crossCheck, for a provider whose base the others do not quote', () => {
  // 5 March 2026, one euro = 1.1612 USD, 24.36 CZK, 1.59 CAD, 4.3107 PLN, 48.19 UAH; each bank in
  // its own base, to five significant digits. Nobody but the NBU quotes the hryvnia.
  const ecb = provider('ecb', 'EUR', { USD: '1.1612', CZK: '24.36', CAD: '1.59', PLN: '4.3107' });
  const cnb = provider('cnb', 'CZK', { USD: '1/20.978', EUR: '1/24.36', CAD: '1/15.321', PLN: '1/5.651' });
  const boc = provider('boc', 'CAD', { USD: '1/1.3693', EUR: '1/1.59', CZK: '1/0.065271', PLN: '1/0.36885' });
  const nbp = provider('nbp', 'PLN', { USD: '1/3.7123', EUR: '1/4.3107', CZK: '1/0.17696', CAD: '1/2.7111' });
  const nbu = (rates: Record<string, string> = {}, day = DAY) =>
    provider('nbu', 'UAH', { USD: '1/41.5', EUR: '1/48.19', CZK: '1/1.9783', CAD: '1/30.308', PLN: '1/11.179', ...rates }, day);

  it('agrees when every number does: each of its numbers is compared, through the others\' bases', () => {
    const check = crossCheck([nbu(), ecb, cnb, boc, nbp], parsePercent('2'));
    assert.deepEqual(check.findings, []);
    assert.deepEqual(providerCrossCheck(check, 'nbu'), { state: 'agrees', outliers: [] });
  });

  for (const [name, wrong] of [
    ['×1000', '1/41500'],
    ['inverted', '1/0.024096'],
  ] as const) {
    it(`sets aside its dollar published ${name}, and nothing else of anyone`, () => {
      const check = crossCheck([nbu({ USD: wrong }), ecb, cnb, boc, nbp], parsePercent('2'));
      assert.equal(check.findings.length, 1, JSON.stringify(check.findings));
      const [f] = check.findings;
      assert.deepEqual({ ...f!, median: undefined }, { provider: 'nbu', currency: 'USD', day: DAY, base: 'UAH', rate: wrong, median: undefined, others: ['boc', 'cnb', 'ecb', 'nbp'], agreeing: 4, setAside: true });
      // Dollars per hryvnia: each other's dollar per its base × the NBU's own number for that base.
      const crosses = [
        new D('1.1612').div('48.19'),
        new D(1).div('20.978').div('1.9783'),
        new D(1).div('1.3693').div('30.308'),
        new D(1).div('3.7123').div('11.179'),
      ].sort((x, y) => x.cmp(y));
      assert.equal(f!.median, formatRate(crosses[1]!.add(crosses[2]!).div(2)));
    });
  }

  // Whichever of the five publishes a wrong dollar, on whatever base, that number alone is set aside.
  const timesThousand = (text: string) => (text.startsWith('1/') ? `1/${new D(text.slice(2)).div(1000).toFixed()}` : new D(text).mul(1000).toFixed());
  const inverted = (text: string) => (text.startsWith('1/') ? text.slice(2) : `1/${text}`);
  for (const [name, wrong] of [
    ['×1000', timesThousand],
    ['inverted', inverted],
  ] as const) {
    it(`sets aside the dollar published ${name} by any one of them, whatever its base, and nothing else`, () => {
      const all = { ecb, cnb, boc, nbp, nbu: nbu() };
      for (const [id, data] of Object.entries(all)) {
        const others = Object.values(all).filter((d) => d !== data);
        const usd = rateTextOn(data, 'USD', DAY)!;
        const rates = Object.fromEntries([...data.series.keys()].map((code) => [code, code === 'USD' ? wrong(usd) : rateTextOn(data, code, DAY)!]));
        const check = crossCheck([provider(id, data.base, rates), ...others], parsePercent('2'));
        assert.deepEqual(
          check.findings.filter((f) => f.setAside).map((f) => [f.provider, f.currency]),
          [[id, 'USD']],
          `${id}: ${JSON.stringify(check.findings)}`,
        );
      }
    });
  }

  it('through a currency both quote when neither quotes the other\'s base, unmoved by one wrong bridge', () => {
    // Four banks of bases nobody else quotes, each quoting the same four currencies; "own" publishes
    // its dollar ×1000. Its pound, yen and franc are compared through the crosses' median bridge,
    // so its wrong dollar, a bridge too, flags nothing else.
    const units = { USD: '1.1612', GBP: '0.8651', JPY: '172.35', CHF: '0.9372' };
    const perOwn = (rates: Record<string, string>, scale: string) => Object.fromEntries(Object.entries(rates).map(([code, rate]) => [code, new D(rate).div(scale).toSignificantDigits(8).toFixed()]));
    const others = ['a', 'b', 'c'].map((id, i) => provider(id, `X${'ABC'[i]}X`, perOwn(units, ['2', '3', '5'][i]!)));
    const own = provider('own', 'XOW', { ...perOwn(units, '7'), USD: new D('1.1612').div('7').mul(1000).toSignificantDigits(8).toFixed() });
    const check = crossCheck([own, ...others], parsePercent('2'));
    assert.deepEqual(
      check.findings.filter((f) => f.provider === 'own').map((f) => [f.currency, f.setAside]),
      [['USD', true]],
    );
  });

  it('compares a number dated ahead of the others with their newest numbers within a few days', () => {
    // The NBU fixes the 6th's rates on the 5th; the others have published up to the 5th.
    const ahead = nbu({ USD: '1/41500' }, '2026-03-06');
    const check = crossCheck([ahead, ecb, cnb, boc, nbp], parsePercent('2'));
    const f = check.findings.find((x) => x.provider === 'nbu')!;
    assert.equal(f.day, '2026-03-06');
    assert.equal(f.setAside, true);
    assert.equal(check.setAside('nbu', 'USD', '2026-03-06'), true);
    // A number more than NEARBY_DAYS after the others' newest is compared with nothing.
    const far = nbu({ USD: '1/41500' }, addDays(DAY, NEARBY_DAYS + 1));
    assert.deepEqual(crossCheck([far, ecb, cnb, boc, nbp], parsePercent('2')).findings.filter((x) => x.provider === 'nbu'), []);
  });

  it('flags a currency only two providers quote when they disagree, without setting it aside', () => {
    const bdi = provider('bancaditalia', 'EUR', { KZT: '603.12', USD: '1.1612', UAH: '48.19' });
    const check = crossCheck([nbu({ KZT: '1/0.079903' }), bdi], parsePercent('2'));
    assert.deepEqual(check.findings, []);
    // The NBU's tenge ×100 (hryvnias per 100 tenge read as per one).
    const wrong = crossCheck([nbu({ KZT: '1/7.9903' }), bdi], parsePercent('2'));
    assert.deepEqual(
      wrong.findings.map((f) => [f.provider, f.currency, f.agreeing, f.setAside]).sort(),
      [
        ['bancaditalia', 'KZT', 1, false],
        ['nbu', 'KZT', 1, false],
      ],
    );
  });
});
