import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servingOrder } from '../../src/core/preference.js';

const providers = ['ecb', 'nbu', 'cnb', 'bancaditalia', 'peg-usd'];
const banks = [
  { id: 'ecb', base: 'EUR' },
  { id: 'nbu', base: 'UAH' },
  { id: 'cnb', base: 'CZK' },
  { id: 'bancaditalia', base: 'EUR' },
];

test("a currency is served first by its own central bank, then in the configured order", () => {
  const order = servingOrder(providers, banks);
  assert.deepEqual(order('CZK'), ['cnb', 'ecb', 'nbu', 'bancaditalia', 'peg-usd']);
  assert.deepEqual(order('UAH'), ['nbu', 'ecb', 'cnb', 'bancaditalia', 'peg-usd']);
  // Two banks issuing the euro keep their configured order, before the others.
  assert.deepEqual(order('EUR'), ['ecb', 'bancaditalia', 'nbu', 'cnb', 'peg-usd']);
  assert.deepEqual(servingOrder(['bancaditalia', 'nbu', 'ecb'], banks)('EUR'), ['bancaditalia', 'ecb', 'nbu']);
  // No configured bank issues the dollar (a parity against it is no issuer): the configured order.
  assert.deepEqual(order('USD'), providers);
});

test('a bank that is not configured serves nothing', () => {
  assert.deepEqual(servingOrder(['ecb', 'nbu'], banks)('CZK'), ['ecb', 'nbu']);
});
