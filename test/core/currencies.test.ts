import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { DECIMALS_WITHOUT_MINOR_UNITS, isIsoCurrency, isoCurrencies, isoCurrency, parseCurrency, resultDecimals } from '../../src/core/currencies.js';
import { DomainError } from '../../src/core/errors.js';
import { AMENDMENTS, amendedList, contradiction, type Amendment, type IsoRow } from '../../scripts/iso-4217.js';

function assertInvalidCurrency(input: string, param: string): void {
  assert.throws(
    () => parseCurrency(input, param),
    (error: unknown) => {
      assert.ok(error instanceof DomainError, `expected DomainError for ${JSON.stringify(input)}`);
      assert.equal(error.code, 'invalid_currency');
      assert.equal(error.param, param);
      assert.equal(error.retryAfterSeconds, undefined);
      return true;
    },
  );
}

describe('parseCurrency', () => {
  it('matches ISO codes case-insensitively and answers upper-case', () => {
    assert.equal(parseCurrency('USD', 'from'), 'USD');
    assert.equal(parseCurrency('usd', 'from'), 'USD');
    assert.equal(parseCurrency('uSd', 'to'), 'USD');
    assert.equal(parseCurrency('jpy', 'to'), 'JPY');
    assert.equal(parseCurrency('Xau', 'to'), 'XAU');
    assert.equal(parseCurrency('eur', 'from'), 'EUR');
  });

  it('rejects codes that are not ISO 4217, naming the offending parameter', () => {
    // Three letters but never assigned.
    assertInvalidCurrency('XYZ', 'from');
    assertInvalidCurrency('xyz', 'to');
    assertInvalidCurrency('ABC', 'to');
    // Wrong shape.
    assertInvalidCurrency('usdd', 'from');
    assertInvalidCurrency('US', 'from');
    assertInvalidCurrency('', 'to');
    assertInvalidCurrency('U5D', 'to');
    assertInvalidCurrency(' USD', 'from');
    assertInvalidCurrency('USD ', 'from');
    assertInvalidCurrency('U-D', 'from');
    assertInvalidCurrency('840', 'from');
  });

  it('says of an unknown code, as typed, that the service does not serve it', () => {
    assert.throws(() => parseCurrency('xyz', 'to'), { message: "'xyz' is not an ISO 4217 currency code this service serves." });
  });

  it('accepts codes ISO 4217 has withdrawn (their history is served) and codes added since the package', () => {
    assert.equal(parseCurrency('hrk', 'to'), 'HRK');
    assert.equal(parseCurrency('CYP', 'from'), 'CYP');
    assert.equal(parseCurrency('xcg', 'to'), 'XCG');
  });

  it('keeps the echoed input short in the message', () => {
    const long = 'Q'.repeat(200);
    assert.throws(
      () => parseCurrency(long, 'from'),
      (error: unknown) => error instanceof DomainError && error.message.includes('Q'.repeat(16)) && !error.message.includes('Q'.repeat(17)),
    );
  });
});

describe('ISO 4217 table', () => {
  it('holds current codes, withdrawn ones marked with their day, and nothing else', () => {
    for (const code of ['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'KWD', 'BHD', 'XAU', 'XDR', 'CLF', 'ISK', 'XCG', 'ZWG', 'SLE']) {
      assert.equal(isIsoCurrency(code), true, code);
      assert.equal(isoCurrency(code)?.withdrawn, undefined, code);
    }
    const withdrawn = { HRK: '2023-01-01', BGN: '2026-01-01', CYP: '2008-01-01', LTL: '2015-01-01', ANG: '2025-07-01', ZWL: '2024-09-01', SLL: '2024-01-01', CUC: '2025-01-01' };
    for (const [code, day] of Object.entries(withdrawn)) assert.equal(isoCurrency(code)?.withdrawn, day, code);
    assert.equal(isoCurrency('XCG')?.minorUnits, 2);
    for (const code of ['XYZ', 'usd', 'EURO', 'constructor', 'toString', '__proto__']) assert.equal(isIsoCurrency(code), false, code);
    assert.equal(isoCurrency('toString'), undefined);
    assert.equal(isoCurrency('USD')?.minorUnits, 2);
    assert.equal(isoCurrency('JPY')?.minorUnits, 0);
    // "N.A." in ISO 4217 must stay "no minor units", not 0.
    assert.equal(isoCurrency('XAU')?.minorUnits, null);
    assert.ok(isoCurrencies().length > 170);
    assert.ok(isoCurrencies().every((c) => isoCurrency(c.code) === c));
  });

  it('is what the currency-codes package holds, amended (scripts/iso-4217.ts --check)', () => {
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/iso-4217.ts', '--check'], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
  });
});

describe('resultDecimals', () => {
  it('uses ISO 4217 minor units', () => {
    assert.equal(resultDecimals('USD'), 2);
    assert.equal(resultDecimals('EUR'), 2);
    assert.equal(resultDecimals('JPY'), 0);
    assert.equal(resultDecimals('ISK'), 0);
    assert.equal(resultDecimals('KRW'), 0);
    assert.equal(resultDecimals('KWD'), 3);
    assert.equal(resultDecimals('BHD'), 3);
    assert.equal(resultDecimals('CLF'), 4);
  });

  it('uses 8 decimals where ISO 4217 has no minor units', () => {
    assert.equal(DECIMALS_WITHOUT_MINOR_UNITS, 8);
    assert.equal(resultDecimals('XAU'), 8);
    assert.equal(resultDecimals('XAG'), 8);
    assert.equal(resultDecimals('XDR'), 8);
  });
});

describe('ISO 4217 amendments', () => {
  const xcg: Amendment = { change: 'added', on: '2025-03-31', row: { code: 'XCG', name: 'Caribbean Guilder', minorUnits: 2 }, source: 'test' };
  const ang: Amendment = { change: 'withdrawn', on: '2025-07-01', row: { code: 'ANG', name: 'Netherlands Antillean Guilder', minorUnits: 2 }, source: 'test' };
  const packaged = (rows: IsoRow[]) => new Map(rows.map((r) => [r.code, r]));

  it('adds the codes added since the package and marks the withdrawn ones', () => {
    const rows = amendedList(packaged([ang.row, { code: 'EUR', name: 'Euro', minorUnits: 2 }]), '2024-06-25', [xcg, ang]);
    assert.deepEqual(rows.get('XCG'), xcg.row);
    assert.deepEqual(rows.get('ANG'), { ...ang.row, withdrawn: '2025-07-01' });
    assert.deepEqual(rows.get('EUR'), { code: 'EUR', name: 'Euro', minorUnits: 2 });
  });

  it('fails when a newer package contradicts an amendment', () => {
    // A list published after the amendments: XCG missing, ANG still there.
    assert.match(contradiction(xcg, undefined, '2025-06-01')!, /XCG: added on 2025-03-31, but missing/);
    assert.match(contradiction(ang, ang.row, '2026-01-01')!, /ANG: withdrawn on 2025-07-01, but still in/);
    // A list that holds the added code: the amendment is no longer needed.
    assert.match(contradiction(xcg, xcg.row, '2025-06-01')!, /drop the amendment/);
    // Minor units that differ, whenever the list was published.
    assert.match(contradiction(xcg, { ...xcg.row, minorUnits: 3 }, '2024-06-25')!, /3 minor units/);
    assert.throws(() => amendedList(packaged([ang.row]), '2026-01-01', [ang]), /contradicts the ISO 4217 amendments/);
    // An older list: nothing to say.
    assert.equal(contradiction(xcg, undefined, '2024-06-25'), undefined);
    assert.equal(contradiction(ang, ang.row, '2024-06-25'), undefined);
  });

  it('gives every amendment a date and a source, once per code', () => {
    const codes = AMENDMENTS.map((a) => a.row.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const a of AMENDMENTS) {
      assert.match(a.on, /^\d{4}-\d{2}-\d{2}$/, a.row.code);
      assert.ok(a.source.length > 10, a.row.code);
    }
  });
});
