import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { DECIMALS_WITHOUT_MINOR_UNITS, isIsoCurrency, isoCurrencies, isoCurrency, parseCurrency, resultDecimals } from '../../src/core/currencies.js';
import { DomainError } from '../../src/core/errors.js';

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
    // Three letters but not assigned (XYZ), withdrawn (HRK became EUR in 2023, CYP in 2008).
    assertInvalidCurrency('XYZ', 'from');
    assertInvalidCurrency('xyz', 'to');
    assertInvalidCurrency('HRK', 'to');
    assertInvalidCurrency('CYP', 'from');
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

  it('says of a withdrawn code, as typed, that the service does not serve it, not that it is no ISO 4217 code', () => {
    assert.throws(() => parseCurrency('hrk', 'to'), { message: "'hrk' is not an ISO 4217 currency code this service serves." });
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
  it('holds current codes and not withdrawn ones', () => {
    for (const code of ['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'KWD', 'BHD', 'XAU', 'XDR', 'CLF', 'ISK']) {
      assert.equal(isIsoCurrency(code), true, code);
    }
    for (const code of ['HRK', 'CYP', 'LTL', 'XYZ', 'usd', 'EURO', 'constructor', 'toString', '__proto__']) assert.equal(isIsoCurrency(code), false, code);
    assert.equal(isoCurrency('toString'), undefined);
    assert.equal(isoCurrency('USD')?.minorUnits, 2);
    assert.equal(isoCurrency('JPY')?.minorUnits, 0);
    // "N.A." in ISO 4217 must stay "no minor units", not 0.
    assert.equal(isoCurrency('XAU')?.minorUnits, null);
    assert.ok(isoCurrencies().length > 170);
    assert.ok(isoCurrencies().every((c) => isoCurrency(c.code) === c));
  });

  it('is what the currency-codes package holds (scripts/iso-4217.ts --check)', () => {
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
