/**
 * The new banks read the right way round and at the right scale: on days their recordings share,
 * one bank's number for another's currency meets the other's number for its own, through a third
 * currency where needed. Rates of two fixings of a day differ by a fraction of a per cent; a
 * misread direction or a unit scale off by 10, 100 or 1,000 does not come near. Each document is
 * read by its parser, each expectation computed here with decimal.js from the stored numbers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decimal } from 'decimal.js';
import type { RateDocument } from '../../src/core/ports.js';
import { parseBcraRates } from '../../src/providers/bcra.js';
import { parseCbaLatest, parseCbaRange } from '../../src/providers/cba.js';
import { cbrCurrencies, parseCbrDaily, parseCbrDynamic } from '../../src/providers/cbr.js';
import { parseCbuRates } from '../../src/providers/cbu.js';
import { nbrbCurrencies, parseNbrbDynamics } from '../../src/providers/nbrb.js';
import { parseNbtRates } from '../../src/providers/nbt.js';
import { bcraByDay, cbaLatest, cbaRange, cbrDynamics, cbrRecordings, cbuByDay, nbrbDynamics, nbrbRecordings, nbtByDay } from '../support/bank-stand-ins.js';

/** Units of the bank's base per one unit of `code` on `day`, from a stored `1/x` or `x`. */
function baseUnits(document: RateDocument, day: string, code: string): Decimal {
  const stored = document.days.find((d) => d.day === day)?.rates[code];
  assert.ok(stored, `${document.provider} has ${code} on ${day}`);
  return stored.startsWith('1/') ? new Decimal(stored.slice(2)) : new Decimal(1).div(stored);
}
const near = (a: Decimal, b: Decimal, percent: number, what: string) => assert.ok(a.div(b).minus(1).abs().mul(100).lt(percent), `${what}: ${a.toFixed(8)} vs ${b.toFixed(8)}`);

const cbrText = new TextDecoder('windows-1251').decode(cbrRecordings[0]!.body);
/** The Bank of Russia's series of a currency, 3 to 5 March. */
const cbrSeries = (code: string) => {
  const currency = cbrCurrencies(cbrText).find((c) => c.code === code)!;
  return parseCbrDynamic(new TextDecoder('windows-1251').decode(cbrDynamics.get(currency.id)!.body), currency);
};
/** The NBRB's series of a currency, 1 to 17 March. */
const nbrbSeries = (code: string) => {
  const currency = nbrbCurrencies(nbrbRecordings[0]!.body.toString('utf8')).find((c) => c.code === code)!;
  return parseNbrbDynamics(nbrbDynamics.get(currency.id)!.body.toString('utf8'), currency);
};
const cba = parseCbaRange(cbaRange.body.toString('utf8'));

describe('the new banks against each other, on shared days', () => {
  it('the rouble and the Belarusian rouble: the Bank of Russia\'s and the NBRB\'s numbers meet (3 to 5 March)', () => {
    const [rubInByn, bynInRub] = [nbrbSeries('RUB'), cbrSeries('BYN')];
    for (const day of ['2026-03-03', '2026-03-04', '2026-03-05']) {
      near(baseUnits(rubInByn, day, 'RUB').mul(baseUnits(bynInRub, day, 'BYN')), new Decimal(1), 1, `RUB×BYN ${day}`);
    }
  });

  it('the dram: the CBA\'s rouble and Belarusian rouble meet the Bank of Russia\'s and the NBRB\'s drams, per 100 and per 1,000 as they quote them', () => {
    const [amdInRub, amdInByn] = [cbrSeries('AMD'), nbrbSeries('AMD')];
    for (const day of ['2026-03-03', '2026-03-04', '2026-03-05']) {
      near(baseUnits(cba, day, 'RUB').mul(baseUnits(amdInRub, day, 'AMD')), new Decimal(1), 1.5, `CBA RUB × CBR AMD ${day}`);
      near(baseUnits(cba, day, 'BYN').mul(baseUnits(amdInByn, day, 'AMD')), new Decimal(1), 1.5, `CBA BYN × NBRB AMD ${day}`);
    }
  });

  it('the dollar and the euro: the BCRA\'s 19 March and the CBA\'s 18 March give the same euro in dollars', () => {
    const bcra = parseBcraRates(bcraByDay.get('2026-03-19')!.body.toString('utf8'));
    const latest = parseCbaLatest(cbaLatest.body.toString('utf8'));
    near(baseUnits(bcra, '2026-03-19', 'EUR').div(baseUnits(bcra, '2026-03-19', 'USD')), baseUnits(latest, '2026-03-18', 'EUR').div(baseUnits(latest, '2026-03-18', 'USD')), 1, 'EUR in USD');
  });

  it('the sum and the somoni: the CBU\'s (3 April) and the NBT\'s (18 May) sums per somoni agree within the weeks between them', () => {
    const cbu = parseCbuRates(cbuByDay.get('2026-04-03')!.body.toString('utf8'));
    const nbt = parseNbtRates(nbtByDay.get('2026-05-18')!.body.toString('utf8'));
    // Sums per somoni: the CBU's somoni, and the inverse of the NBT's sum (quoted per 100).
    const viaCbu = baseUnits(cbu, '2026-04-03', 'TJS');
    const viaNbt = new Decimal(1).div(baseUnits(nbt, '2026-05-18', 'UZS'));
    near(viaCbu, viaNbt, 5, 'UZS per TJS');
    // The NBT's and the Bank of Russia's roubles through the dollar (a month apart: within 10%).
    const rubPerUsd = baseUnits(parseCbrDaily(cbrText), '2026-04-25', 'USD');
    near(baseUnits(nbt, '2026-05-18', 'USD').div(baseUnits(nbt, '2026-05-18', 'RUB')), rubPerUsd, 10, 'RUB per USD');
  });
});
