import { sql, type Kysely } from 'kysely';
import type { CheckedNumber, DayRange, DocumentChecks, ProviderState, RateDocument, RateStore, Revision, StoredQuote } from '../core/ports.js';
import type { Day } from '../core/time.js';
import type { Database, RateChecksTable, RateRevisionsTable, RatesTable } from './schema.js';

/** Rows per INSERT: 6 columns each keeps every statement well under SQLite's variable limit. */
const BATCH = 500;

function toQuote(row: RatesTable): StoredQuote {
  return { provider: row.provider, base: row.base, quote: row.quote, day: row.day, asOf: row.as_of, rate: row.rate };
}

function toRevision(row: RateRevisionsTable): Revision {
  return {
    provider: row.provider,
    base: row.base,
    currency: row.quote,
    day: row.day,
    rate: row.rate,
    asOf: row.as_of,
    replacedAt: row.replaced_at,
    replacedBy: row.replaced_by,
  };
}

function toChecked(row: RateChecksTable): CheckedNumber {
  return {
    provider: row.provider,
    base: row.base,
    currency: row.quote,
    day: row.day,
    asOf: row.as_of,
    rate: row.rate,
    previous: row.previous,
    kind: row.kind === 'correction' ? 'correction' : 'move',
    held: row.held === 1,
    reason: row.reason,
    notedAt: row.noted_at,
  };
}

export function createRateStore(db: Kysely<Database>): RateStore {
  /** A provider's quotes between two days inclusive, optionally of some currencies only, ascending by day. */
  async function quotesBetween(provider: string, range: DayRange, currencies?: readonly string[]): Promise<StoredQuote[]> {
    let query = db.selectFrom('rates').selectAll().where('provider', '=', provider).where('day', '>=', range.from).where('day', '<=', range.to);
    if (currencies) query = query.where('quote', 'in', [...currencies]);
    const rows = await query.orderBy('day').orderBy('quote').execute();
    return rows.map(toQuote);
  }

  return {
    async saveDocument(document: RateDocument, checks?: DocumentChecks): Promise<number> {
      const rows: RatesTable[] = [];
      for (const day of document.days) {
        for (const [quote, rate] of Object.entries(day.rates)) {
          rows.push({ provider: document.provider, base: document.base, quote, day: day.day, as_of: day.asOf, rate });
        }
      }
      const noted = checks !== undefined && (checks.revisions.length > 0 || checks.checked.length > 0 || checks.cleared.length > 0);
      if (rows.length === 0 && !noted) return 0;
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('provider_state')
          .values({ provider: document.provider, failing: 0, data_version: 1 })
          .onConflict((oc) => oc.column('provider').doUpdateSet({ data_version: sql`provider_state.data_version + 1` }))
          .execute();
        for (let i = 0; i < rows.length; i += BATCH) {
          await trx
            .insertInto('rates')
            .values(rows.slice(i, i + BATCH))
            .onConflict((oc) =>
              oc.columns(['provider', 'quote', 'day']).doUpdateSet((eb) => ({
                base: eb.ref('excluded.base'),
                as_of: eb.ref('excluded.as_of'),
                rate: eb.ref('excluded.rate'),
              })),
            )
            .execute();
        }
        if (!checks) return;
        for (const { currency, day } of checks.cleared) {
          await trx.deleteFrom('rate_checks').where('provider', '=', document.provider).where('quote', '=', currency).where('day', '=', day).execute();
        }
        for (const r of checks.revisions) {
          await trx
            .insertInto('rate_revisions')
            .values({ provider: r.provider, quote: r.currency, day: r.day, base: r.base, rate: r.rate, as_of: r.asOf, replaced_at: r.replacedAt, replaced_by: r.replacedBy })
            .onConflict((oc) => oc.doNothing())
            .execute();
        }
        for (const c of checks.checked) {
          const values = { base: c.base, as_of: c.asOf, rate: c.rate, previous: c.previous, kind: c.kind, held: c.held ? 1 : 0, reason: c.reason.slice(0, 500), noted_at: c.notedAt };
          await trx
            .insertInto('rate_checks')
            .values({ provider: c.provider, quote: c.currency, day: c.day, ...values })
            .onConflict((oc) => oc.columns(['provider', 'quote', 'day']).doUpdateSet(values))
            .execute();
        }
      });
      return rows.length;
    },

    async revisions(provider: string, range: DayRange): Promise<Revision[]> {
      const rows = await db
        .selectFrom('rate_revisions')
        .selectAll()
        .where('provider', '=', provider)
        .where('day', '>=', range.from)
        .where('day', '<=', range.to)
        .orderBy('replaced_at')
        .orderBy('day')
        .orderBy('quote')
        .execute();
      return rows.map(toRevision);
    },

    async checkedNumbers(provider: string): Promise<CheckedNumber[]> {
      const rows = await db.selectFrom('rate_checks').selectAll().where('provider', '=', provider).orderBy('day').orderBy('quote').execute();
      return rows.map(toChecked);
    },

    async latestDay(provider: string): Promise<Day | null> {
      const row = await db
        .selectFrom('rates')
        .select((eb) => eb.fn.max('day').as('day'))
        .where('provider', '=', provider)
        .executeTakeFirst();
      return row?.day ?? null;
    },

    async oldestDay(provider: string): Promise<Day | null> {
      const row = await db
        .selectFrom('rates')
        .select((eb) => eb.fn.min('day').as('day'))
        .where('provider', '=', provider)
        .executeTakeFirst();
      return row?.day ?? null;
    },

    async quotesOn(provider: string, day: Day): Promise<StoredQuote[]> {
      const rows = await db.selectFrom('rates').selectAll().where('provider', '=', provider).where('day', '=', day).execute();
      return rows.map(toQuote);
    },

    async series(provider: string, currencies: readonly string[], range: DayRange): Promise<StoredQuote[]> {
      if (currencies.length === 0) return [];
      return quotesBetween(provider, range, currencies);
    },

    allQuotes(provider: string, range: DayRange): Promise<StoredQuote[]> {
      return quotesBetween(provider, range);
    },

    async dataVersions(): Promise<Map<string, number>> {
      const rows = await db.selectFrom('provider_state').select(['provider', 'data_version']).execute();
      return new Map(rows.map((r) => [r.provider, Number(r.data_version)]));
    },

    async publishedDays(provider: string, range: DayRange): Promise<Day[]> {
      const rows = await db
        .selectFrom('rates')
        .select('day')
        .distinct()
        .where('provider', '=', provider)
        .where('day', '>=', range.from)
        .where('day', '<=', range.to)
        .orderBy('day')
        .execute();
      return rows.map((r) => r.day);
    },

    async pruneBefore(day: Day): Promise<number> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('rate_revisions').where('day', '<', day).execute();
        await trx.deleteFrom('rate_checks').where('day', '<', day).execute();
        const result = await trx.deleteFrom('rates').where('day', '<', day).executeTakeFirst();
        return Number(result.numDeletedRows);
      });
    },

    async countQuotes(): Promise<number> {
      const row = await db.selectFrom('rates').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async providerState(provider: string): Promise<ProviderState | null> {
      const row = await db.selectFrom('provider_state').selectAll().where('provider', '=', provider).executeTakeFirst();
      if (!row) return null;
      return {
        provider: row.provider,
        lastAttemptAt: row.last_attempt_at,
        lastSuccessAt: row.last_success_at,
        lastFailureAt: row.last_failure_at,
        lastError: row.last_error,
        failing: row.failing === 1,
      };
    },

    async recordAttempt(provider, outcome): Promise<void> {
      const values = outcome.ok
        ? { last_attempt_at: outcome.at, last_success_at: outcome.at, failing: 0 }
        : { last_attempt_at: outcome.at, last_failure_at: outcome.at, last_error: outcome.error.slice(0, 500), failing: 1 };
      await db
        .insertInto('provider_state')
        .values({ provider, ...values })
        .onConflict((oc) => oc.column('provider').doUpdateSet(values))
        .execute();
    },
  };
}
