import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RateDocument } from '../../src/core/ports.js';
import { migrateToLatest, openDatabase, type OpenDatabase } from '../../src/storage/database.js';
import { createKeyStore } from '../../src/storage/key-store.js';
import { createQuotaStore } from '../../src/storage/quota-store.js';
import { createRateStore } from '../../src/storage/rate-store.js';
import { createPostgresSchema, postgresAvailable, storeEngines, type TestStore } from '../support/stores.js';

const DOCUMENT: RateDocument = {
  provider: 'ecb',
  base: 'EUR',
  days: [
    { day: '2026-03-04', asOf: '2026-03-04T15:00:00Z', rates: { USD: '1.1600', JPY: '182.5', GBP: '0.87' } },
    { day: '2026-03-05', asOf: '2026-03-05T15:00:00Z', rates: { USD: '1.1618', JPY: '183.03' } },
  ],
};

const engines = storeEngines();

for (const engine of engines) {
  describe(`stores on ${engine.name}`, () => {
    let opened: TestStore | null = null;
    let database: OpenDatabase | undefined;
    let skip = false;

    before(async () => {
      opened = await engine.open();
      if (!opened) {
        skip = true;
        return;
      }
      database = opened.database;
    });
    after(async () => {
      await opened?.close();
    });

    test('migrations are idempotent', async (t) => {
      if (skip) return t.skip('server not available');
      const again = await migrateToLatest(database!.db);
      assert.deepEqual(again.results, []);
    });

    test('rates are stored exactly as published, replaced on conflict, and read back by day and series', async (t) => {
      if (skip) return t.skip('server not available');
      const rates = createRateStore(database!.db);
      assert.equal(await rates.latestDay('ecb'), null);
      assert.equal(await rates.oldestDay('ecb'), null);
      assert.deepEqual(await rates.dataVersions(), new Map());
      assert.equal(await rates.saveDocument(DOCUMENT), 5);
      assert.equal(await rates.oldestDay('ecb'), DOCUMENT.days[0]!.day);
      assert.deepEqual(await rates.dataVersions(), new Map([['ecb', 1]]));
      assert.deepEqual(
        (await rates.allQuotes('ecb', { from: '2026-03-05', to: '2026-03-05' })).map((q) => q.quote),
        ['JPY', 'USD'],
      );
      assert.equal(await rates.latestDay('ecb'), '2026-03-05');
      const latest = await rates.quotesOn('ecb', '2026-03-05');
      assert.deepEqual(
        latest.map((q) => [q.quote, q.rate, q.base, q.asOf]).sort(),
        [
          ['JPY', '183.03', 'EUR', '2026-03-05T15:00:00Z'],
          ['USD', '1.1618', 'EUR', '2026-03-05T15:00:00Z'],
        ],
      );
      const series = await rates.series('ecb', ['USD', 'GBP'], { from: '2026-03-01', to: '2026-03-31' });
      assert.deepEqual(
        series.map((q) => `${q.day} ${q.quote} ${q.rate}`),
        ['2026-03-04 GBP 0.87', '2026-03-04 USD 1.1600', '2026-03-05 USD 1.1618'],
      );
      await rates.saveDocument({ ...DOCUMENT, days: [{ day: '2026-03-05', asOf: '2026-03-05T15:00:00Z', rates: { USD: '1.1620' } }] });
      assert.equal((await rates.quotesOn('ecb', '2026-03-05')).find((q) => q.quote === 'USD')?.rate, '1.1620');
      assert.equal((await rates.dataVersions()).get('ecb'), 2);
      assert.equal(await rates.countQuotes(), 5);
      assert.equal(await rates.pruneBefore('2026-03-05'), 3);
      assert.equal(await rates.countQuotes(), 2);
      assert.equal(await rates.oldestDay('ecb'), '2026-03-05');
      assert.equal(await rates.latestDay('other'), null);
    });

    test('revisions and held or flagged numbers are written with the rates, in one transaction, and pruned with them', async (t) => {
      if (skip) return t.skip('server not available');
      const rates = createRateStore(database!.db);
      const held = {
        provider: 'nbu', base: 'UAH', currency: 'USD', day: '2026-03-05', asOf: '2026-03-05T12:00:00Z', rate: '1/43208.1', previous: '1/43.2081',
        kind: 'correction' as const, held: true, reason: 'the correction changes the stored number 1000-fold', notedAt: '2026-03-05T13:00:00Z',
      };
      const flagged = { ...held, currency: 'EGP', rate: '1/0.8', previous: '1/1.2', kind: 'move' as const, held: false, reason: 'moves by more than 25%' };
      const revision = { provider: 'nbu', base: 'UAH', currency: 'EUR', day: '2026-03-04', rate: '1/50.1', asOf: '2026-03-04T12:00:00Z', replacedAt: '2026-03-05T13:00:00Z', replacedBy: '1/50.2' };
      const document = { provider: 'nbu', base: 'UAH', days: [{ day: '2026-03-04', asOf: '2026-03-04T12:00:00Z', rates: { EUR: '1/50.2' } }] };
      assert.equal(await rates.saveDocument(document, { revisions: [revision], checked: [held, flagged], cleared: [] }), 1);
      assert.deepEqual(await rates.revisions('nbu', { from: '2026-03-01', to: '2026-03-31' }), [revision]);
      assert.deepEqual(await rates.revisions('nbu', { from: '2026-03-05', to: '2026-03-31' }), []);
      assert.deepEqual(await rates.checkedNumbers('nbu'), [flagged, held]);
      // Only checks, no rates: still written, and the data version moves so that readers look again.
      const version = (await rates.dataVersions()).get('nbu')!;
      assert.equal(await rates.saveDocument({ ...document, days: [] }, { revisions: [], checked: [{ ...held, held: false, reason: 'released' }], cleared: [{ currency: 'EGP', day: '2026-03-05' }] }), 0);
      assert.deepEqual(await rates.checkedNumbers('nbu'), [{ ...held, held: false, reason: 'released' }]);
      assert.equal((await rates.dataVersions()).get('nbu'), version + 1);
      // A write that fails leaves nothing of itself: a check row whose day is missing (NOT NULL) rolls back the rates too.
      const broken = { ...held, currency: 'GBP', day: null as unknown as string };
      await assert.rejects(rates.saveDocument({ ...document, days: [{ ...document.days[0]!, rates: { EUR: '1/99' } }] }, { revisions: [], checked: [broken], cleared: [] }));
      assert.equal((await rates.quotesOn('nbu', '2026-03-04'))[0]?.rate, '1/50.2');
      await rates.pruneBefore('2026-03-05');
      assert.deepEqual(await rates.revisions('nbu', { from: '2026-03-01', to: '2026-03-31' }), []);
      assert.equal((await rates.checkedNumbers('nbu')).length, 1);
      await rates.pruneBefore('2026-03-06');
      assert.deepEqual(await rates.checkedNumbers('nbu'), []);
    });

    test('provider state records failures and recoveries', async (t) => {
      if (skip) return t.skip('server not available');
      const rates = createRateStore(database!.db);
      // Writing rates (the previous test) creates the state row, but records no attempt.
      assert.deepEqual(await rates.providerState('ecb'), {
        provider: 'ecb',
        lastAttemptAt: null,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastError: null,
        failing: false,
      });
      assert.equal(await rates.providerState('nobody'), null);
      await rates.recordAttempt('ecb', { at: '2026-03-06T10:00:00Z', ok: true });
      await rates.recordAttempt('ecb', { at: '2026-03-06T10:10:00Z', ok: false, error: 'HTTP 500' });
      assert.deepEqual(await rates.providerState('ecb'), {
        provider: 'ecb',
        lastAttemptAt: '2026-03-06T10:10:00Z',
        lastSuccessAt: '2026-03-06T10:00:00Z',
        lastFailureAt: '2026-03-06T10:10:00Z',
        lastError: 'HTTP 500',
        failing: true,
      });
      await rates.recordAttempt('ecb', { at: '2026-03-06T10:20:00Z', ok: true });
      assert.equal((await rates.providerState('ecb'))?.failing, false);
    });

    test('keys are found by hash and revoked by prefix', async (t) => {
      if (skip) return t.skip('server not available');
      const keys = createKeyStore(database!.db);
      const base = { tier: 'free' as const, owner: 'a@example.org', createdAt: '2026-03-06T00:00:00Z', revokedAt: null };
      await keys.insert({ ...base, id: 'k1', prefix: 'exr_Ab_x1234', hash: 'h1' });
      await keys.insert({ ...base, id: 'k2', prefix: 'exr_AbCd5678', hash: 'h2' });
      assert.equal((await keys.findByHash('h1'))?.id, 'k1');
      assert.equal(await keys.findByHash('nope'), null);
      // '_' must match itself only: exr_AbCd… must not be revoked by exr_Ab_.
      const revoked = await keys.revokeByPrefix('exr_Ab_', '2026-03-06T01:00:00Z');
      assert.deepEqual(revoked.map((r) => r.id), ['k1']);
      assert.equal((await keys.findByHash('h1'))?.revokedAt, '2026-03-06T01:00:00Z');
      assert.equal((await keys.findByHash('h2'))?.revokedAt, null);
      assert.deepEqual(await keys.revokeByPrefix('exr_Ab_', '2026-03-06T02:00:00Z'), []);
      assert.equal((await keys.list()).length, 2);
    });

    test('a key is revoked by its hash: that key only, once', async (t) => {
      if (skip) return t.skip('server not available');
      const keys = createKeyStore(database!.db);
      const base = { tier: 'pro' as const, owner: 'b@example.org', createdAt: '2026-03-06T00:00:00Z', revokedAt: null };
      // Two keys with one listed prefix: revoking one by its hash leaves the other.
      await keys.insert({ ...base, id: 'k3', prefix: 'exr_Same1234', hash: 'h3' });
      await keys.insert({ ...base, id: 'k4', prefix: 'exr_Same1234', hash: 'h4' });
      const revoked = await keys.revokeByHash('h3', '2026-03-06T03:00:00Z');
      assert.deepEqual(revoked, { ...base, id: 'k3', prefix: 'exr_Same1234', revokedAt: '2026-03-06T03:00:00Z' });
      assert.equal((await keys.findByHash('h4'))?.revokedAt, null);
      assert.equal(await keys.revokeByHash('h3', '2026-03-06T04:00:00Z'), null, 'revoked already');
      assert.equal((await keys.findByHash('h3'))?.revokedAt, '2026-03-06T03:00:00Z');
      assert.equal(await keys.revokeByHash('nope', '2026-03-06T04:00:00Z'), null);
    });

    test('quota counting is exact under concurrency and stops at the limit', async (t) => {
      if (skip) return t.skip('server not available');
      const quotas = createQuotaStore(database!.db);
      const results = await Promise.all(Array.from({ length: 200 }, () => quotas.consume('k1', '2026-03-06', 150)));
      assert.equal(results.filter((r) => r.allowed).length, 150);
      assert.deepEqual(
        results.filter((r) => r.allowed).map((r) => r.used).sort((a, b) => a - b),
        Array.from({ length: 150 }, (_, i) => i + 1),
      );
      assert.ok(results.filter((r) => !r.allowed).every((r) => r.used === 150));
      assert.equal(await quotas.used('k1', '2026-03-06'), 150);
      assert.equal(await quotas.used('k1', '2026-03-07'), 0);
    });
  });
}

describe('PostgreSQL installations side by side', () => {
  test('migrations in one schema do not confuse another in the same database', async (t) => {
    if (!(await postgresAvailable())) return t.skip('server not available');
    const first = await createPostgresSchema();
    const second = await createPostgresSchema();
    try {
      for (const schema of [first, second]) {
        const database = await openDatabase(schema.url);
        try {
          const result = await migrateToLatest(database.db);
          assert.deepEqual(
            result.results?.map((r) => `${r.migrationName} ${r.status}`),
            ['001-initial Success', '002-data-version Success', '003-quota-journal Success', '004-rate-revisions Success'],
          );
          assert.equal(await createRateStore(database.db).countQuotes(), 0);
        } finally {
          await database.close();
        }
      }
    } finally {
      await first.drop();
      await second.drop();
    }
  });
});
