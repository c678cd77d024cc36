import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { outdatedRates } from '../../src/core/freshness.js';

describe('outdatedRates', () => {
  test('names the newest day and its age once it lies more than the allowed days before today', () => {
    assert.deepEqual(outdatedRates('ecb', '2026-03-05', '2026-11-27', 7), {
      provider: 'ecb',
      newestDay: '2026-03-05',
      ageDays: 267,
      message:
        'the newest ecb rates are of 2026-03-05, 267 days before today (2026-11-27), and are served as the latest: give the provider a current source, or set EXRATES_NOW to replay that time (warned past EXRATES_OLD_RATES_DAYS=7)',
    });
  });

  test('is quiet within the allowed days, on the boundary, and when nothing is stored', () => {
    assert.equal(outdatedRates('ecb', '2026-11-20', '2026-11-27', 7), undefined);
    assert.equal(outdatedRates('ecb', '2026-11-27', '2026-11-27', 7), undefined);
    assert.equal(outdatedRates('ecb', null, '2026-11-27', 7), undefined);
    assert.equal(outdatedRates('ecb', '2026-11-19', '2026-11-27', 7)?.ageDays, 8);
    assert.equal(outdatedRates('file', '2026-03-05', '2026-03-06', 1), undefined);
  });
});
