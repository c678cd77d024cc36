/**
 * A published day does not change silently, and a single source is still checked: the service on
 * SQLite and on PostgreSQL, refreshing from a local ECB stand-in that serves the real ECB files,
 * rewritten the way a broken upstream would (a stored day re-sent with USD ×1000, a new day with
 * USD ×1000, a small correction, a real-sized devaluation, a redenomination), answering through
 * its own HTTP routes. Then the rule itself (checkDocument) on the cases no feed here produces.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { checkDocument, CORRECTABLE_DAYS, FLAG_PERCENT, HOLD_FACTOR, isClosedDay, replacedCurrencyExplains } from '../../src/core/corrections.js';
import { parseRate, type Rational } from '../../src/core/decimal.js';
import type { CheckedNumber, RateDocument, StoredQuote } from '../../src/core/ports.js';
import { frozenClock } from '../../src/core/time.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/log.js';
import { captureLog, issueKey, type CapturedLog } from '../support/apps.js';
import { ECB_CSV, ECB_XML_DIR } from '../support/data.js';
import { createPostgresSchema, postgresAvailable, tempDir } from '../support/stores.js';
import { serveOnLoopback, type LoopbackServer } from '../support/upstreams.js';

const DAILY = readFileSync(join(ECB_XML_DIR, 'eurofxref-daily_2026-02-11.xml'), 'utf8');
const HISTORY_ZIP = zipSync({ 'eurofxref-hist.csv': new Uint8Array(readFileSync(ECB_CSV)) });

/** ECB's daily file of 2026-02-11, dated `day`, with some numbers rewritten (the rest as published that day). */
function daily(day: string, rewrite: Record<string, string> = {}): string {
  let xml = DAILY.replace("time='2026-02-11'", `time='${day}'`);
  for (const [code, rate] of Object.entries(rewrite)) {
    const before = xml;
    xml = xml.replace(new RegExp(`currency='${code}' rate='[^']*'`), `currency='${code}' rate='${rate}'`);
    assert.notEqual(xml, before, `${code} is in the daily file`);
  }
  return xml;
}

interface Service {
  app: FastifyInstance;
  deps: Deps;
  log: CapturedLog;
  rate(query: string): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }>;
  providers(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A new store on each engine, by the URL the service opens (and migrates); null when the engine's server is not available. */
const ENGINES: Array<{ name: string; open(): Promise<{ url: string; drop(): Promise<void> } | null> }> = [
  {
    name: 'SQLite',
    async open() {
      const dir = tempDir('exrates-corrections-');
      return { url: `sqlite:${join(dir.path, 'exrates.db')}`, drop: async () => dir.remove() };
    },
  },
  { name: 'PostgreSQL', open: async () => ((await postgresAvailable()) ? createPostgresSchema() : null) },
];

for (const engine of ENGINES) {
  describe(`corrections and moves from an ECB stand-in, on ${engine.name}`, () => {
    let store: { url: string; drop(): Promise<void> } | null = null;
    let upstream: LoopbackServer;
    let document = daily('2026-02-11');
    let databaseUrl = '';

    before(async () => {
      upstream = await serveOnLoopback((req, res) => {
        const body = req.url === '/eurofxref-hist.zip' ? Buffer.from(HISTORY_ZIP) : req.url === '/eurofxref-daily.xml' ? Buffer.from(document) : undefined;
        if (!body) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': req.url!.endsWith('.zip') ? 'application/zip' : 'text/xml', 'content-length': String(body.length) }).end(body);
      });
      store = await engine.open();
      databaseUrl = store?.url ?? '';
    });
    after(async () => {
      await upstream?.close();
      await store?.drop();
    });

    /** The service as it runs at `now`, refreshed once from the stand-in. */
    async function serviceAt(now: string): Promise<Service> {
      const config = loadConfig({
        EXRATES_DATABASE_URL: databaseUrl,
        EXRATES_PROVIDERS: 'ecb',
        EXRATES_ECB_URL: upstream.origin,
        EXRATES_NOW: now,
        EXRATES_LOG_LEVEL: 'info',
        EXRATES_CONTACT_EMAIL: 'keys@example.org',
        EXRATES_UPSTREAM_TIMEOUT_MS: '10000',
      });
      const log = captureLog();
      const deps = await createDeps(config, { log: createLogger('info', log.stream), clock: frozenClock(config.now!) });
      const app = await buildApp(deps);
      await app.ready();
      const key = await issueKey(deps, 'pro');
      const outcome = await deps.refresher.refreshProvider(deps.providers[0]!);
      assert.equal(outcome.ok, true, outcome.error);
      const get = async (url: string) => {
        const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
        return { status: response.statusCode, headers: response.headers as Record<string, unknown>, body: response.json() as Record<string, unknown> };
      };
      return {
        app,
        deps,
        log,
        rate: (query) => get(`/api/v1/rate?${query}`),
        providers: async () => ((await get('/api/v1/providers')).body.providers as Array<Record<string, unknown>>)[0]!,
        async close() {
          await app.close();
          await deps.close();
        },
      };
    }

    const skipUnless = (t: { skip(message: string): void }) => {
      if (!store) t.skip(`${engine.name} is not available here`);
      return !store;
    };

    it('loads the retained history, then holds a new day\'s USD ×1000 from the only provider and stores the rest of the day', async (t) => {
      if (skipUnless(t)) return;
      document = daily('2026-02-10');
      const load = await serviceAt('2026-02-10T18:00:00Z');
      await load.close();

      document = daily('2026-02-11', { USD: '1190.0' });
      const service = await serviceAt('2026-02-11T18:00:00Z');
      try {
        // The live rate is 2026-02-10's, the last one not held; so is the rate on the day of the ×1000.
        const live = await service.rate('from=EUR&to=USD');
        assert.equal(live.status, 200);
        assert.equal(live.body.rate, '1.1894');
        assert.match(String(live.body.asOf), /^2026-02-10T/);
        assert.equal((await service.rate('from=EUR&to=USD&date=2026-02-11')).body.rate, '1.1894');
        // Everything else of that day is served.
        const yen = await service.rate('from=EUR&to=JPY');
        assert.equal(yen.body.rate, '182.79');
        assert.match(String(yen.body.asOf), /^2026-02-11T/);
        // Said in the log and in /providers, for USD alone.
        const held = service.log.lines.filter((l) => l.msg === `move held, not served: moves 1000-fold from 1.1894 on 2026-02-10`);
        assert.equal(held.length, 1);
        assert.deepEqual([held[0]!.provider, held[0]!.currency, held[0]!.day, held[0]!.rate, held[0]!.previous], ['ecb', 'USD', '2026-02-11', '1190.0', '1.1894']);
        const ecb = await service.providers();
        assert.deepEqual(
          (ecb.held as CheckedNumber[]).map((h) => [h.currency, h.day, h.rate, h.previous, h.kind]),
          [['USD', '2026-02-11', '1190.0', '1.1894', 'move']],
        );
        // The retained history holds one move beyond 25 %, a real one, served: the lira's rebound of 21 December 2021.
        assert.deepEqual(
          (ecb.flagged as CheckedNumber[]).map((f) => [f.currency, f.day, f.rate, f.previous, f.kind]),
          [['TRY', '2021-12-21', '14.7132', '20.0434', 'move']],
        );
        assert.equal((await service.rate('from=EUR&to=TRY&date=2021-12-21')).body.rate, '14.7132');
        assert.deepEqual(ecb.revisions, []);
        assert.equal((await service.deps.rates.quotesOn('ecb', '2026-02-11')).length, 28);
      } finally {
        await service.close();
      }
    });

    it('serves the day once the provider publishes it right, and drops what it held', async (t) => {
      if (skipUnless(t)) return;
      document = daily('2026-02-11');
      const service = await serviceAt('2026-02-11T18:30:00Z');
      try {
        assert.equal((await service.rate('from=EUR&to=USD')).body.rate, '1.19');
        assert.deepEqual((await service.providers()).held, []);
        const withdrawn = service.log.lines.filter((l) => l.msg === 'held number withdrawn: the provider publishes another number for that day');
        assert.deepEqual(withdrawn.map((l) => [l.currency, l.day, l.rate]), [['USD', '2026-02-11', '1190.0']]);
        assert.equal((await service.deps.rates.quotesOn('ecb', '2026-02-11')).length, 29);
      } finally {
        await service.close();
      }
    });

    it('holds a stored day re-sent with USD ×1000: the stored number is still served, live and on that date', async (t) => {
      if (skipUnless(t)) return;
      document = daily('2026-02-11', { USD: '1190.0' });
      const service = await serviceAt('2026-02-11T19:00:00Z');
      try {
        assert.equal((await service.rate('from=EUR&to=USD')).body.rate, '1.19');
        const dated = await service.rate('from=EUR&to=USD&date=2026-02-11');
        assert.equal(dated.body.rate, '1.19');
        // The day is still open to corrections: not immutable.
        assert.doesNotMatch(String(dated.headers['cache-control']), /immutable/);
        const line = service.log.lines.find((l) => String(l.msg).startsWith('correction held, not served'));
        assert.ok(line, 'the held correction is logged');
        assert.match(String(line.msg), /changes the stored number 1000-fold/);
        assert.deepEqual([line.currency, line.day, line.rate, line.previous], ['USD', '2026-02-11', '1190.0', '1.1900']);
        assert.ok(!service.log.lines.some((l) => l.msg === 'correction: a published number changed; the previous one is kept as a revision'));
        const ecb = await service.providers();
        assert.deepEqual(
          (ecb.held as CheckedNumber[]).map((h) => [h.currency, h.day, h.rate, h.previous, h.kind]),
          [['USD', '2026-02-11', '1190.0', '1.1900', 'correction']],
        );
        assert.deepEqual(ecb.revisions, []);
        const stored = (await service.deps.rates.quotesOn('ecb', '2026-02-11')).find((q) => q.quote === 'USD');
        assert.equal(stored?.rate, '1.1900');
      } finally {
        await service.close();
      }
      // Fetched again, the same document decides the same and says nothing new.
      const again = await serviceAt('2026-02-11T19:15:00Z');
      try {
        assert.equal((await again.rate('from=EUR&to=USD')).body.rate, '1.19');
        assert.ok(!again.log.lines.some((l) => String(l.msg).startsWith('correction held')));
      } finally {
        await again.close();
      }
    });

    it('stores a plausible correction, keeps the number it replaced and shows both in provenance and /providers', async (t) => {
      if (skipUnless(t)) return;
      document = daily('2026-02-11', { USD: '1.1903' });
      const service = await serviceAt('2026-02-11T19:30:00Z');
      try {
        const answer = await service.rate('from=EUR&to=USD&expand=provenance');
        assert.equal(answer.body.rate, '1.1903');
        const provenance = answer.body.provenance as { numbers: Array<Record<string, unknown>> };
        assert.deepEqual(provenance.numbers, [
          {
            provider: 'ecb',
            day: '2026-02-11',
            base: 'EUR',
            currency: 'USD',
            rate: '1.1903',
            revisions: [{ rate: '1.1900', asOf: '2026-02-11T15:00:00Z', replacedAt: '2026-02-11T19:30:00.000Z' }],
          },
        ]);
        // A number nobody corrected has no revisions.
        const yen = (await service.rate('from=EUR&to=JPY&expand=provenance')).body.provenance as { numbers: Array<Record<string, unknown>> };
        assert.equal(yen.numbers[0]!.revisions, undefined);
        const line = service.log.lines.find((l) => l.msg === 'correction: a published number changed; the previous one is kept as a revision');
        assert.ok(line);
        assert.deepEqual([line.level, line.currency, line.day, line.rate, line.previous], [40, 'USD', '2026-02-11', '1.1903', '1.1900']);
        const ecb = await service.providers();
        assert.deepEqual(ecb.revisions, [
          { currency: 'USD', day: '2026-02-11', rate: '1.1900', asOf: '2026-02-11T15:00:00Z', replacedAt: '2026-02-11T19:30:00.000Z', replacedBy: '1.1903' },
        ]);
        // The ×1000 held for that day is superseded by the correction that was stored.
        assert.deepEqual(ecb.held, []);
      } finally {
        await service.close();
      }
    });

    it('serves a devaluation of a third in a day, flagged; holds a 1000-fold drop until the next publication confirms it', async (t) => {
      if (skipUnless(t)) return;
      // TRY per EUR up by half (the lira loses a third of its value), JPY redenominated by 1000.
      document = daily('2026-02-12', { USD: '1.1874', TRY: '77.9031', JPY: '0.18252' });
      const first = await serviceAt('2026-02-12T18:00:00Z');
      try {
        assert.equal((await first.rate('from=EUR&to=TRY')).body.rate, '77.9031');
        assert.equal((await first.rate('from=EUR&to=JPY')).body.rate, '182.79');
        const ecb = await first.providers();
        assert.deepEqual(
          (ecb.flagged as CheckedNumber[]).map((f) => [f.currency, f.day, f.rate, f.previous]),
          [['TRY', '2026-02-12', '77.9031', '51.9354'], ['TRY', '2021-12-21', '14.7132', '20.0434']],
        );
        assert.deepEqual(
          (ecb.held as CheckedNumber[]).map((h) => [h.currency, h.day, h.rate]),
          [['JPY', '2026-02-12', '0.18252']],
        );
        assert.ok(first.log.lines.some((l) => l.msg === 'move flagged, served' && l.currency === 'TRY'));
      } finally {
        await first.close();
      }
      document = daily('2026-02-13', { USD: '1.1862', TRY: '77.95', JPY: '0.18183' });
      const next = await serviceAt('2026-02-13T18:00:00Z');
      try {
        assert.equal((await next.rate('from=EUR&to=JPY')).body.rate, '0.18183');
        assert.equal((await next.rate('from=EUR&to=JPY&date=2026-02-12')).body.rate, '0.18252');
        const ecb = await next.providers();
        assert.deepEqual(ecb.held, []);
        const released = (ecb.flagged as CheckedNumber[]).find((f) => f.currency === 'JPY');
        assert.match(released?.reason ?? '', /released 2026-02-13T18:00:00.000Z: confirmed by ecb's next publication \(2026-02-13\)/);
        assert.ok(next.log.lines.some((l) => String(l.msg).startsWith('held number released') && l.currency === 'JPY'));
      } finally {
        await next.close();
      }
    });
  });
}

describe('checkDocument', () => {
  const AT = '2026-02-11T18:00:00.000Z';
  const quote = (currency: string, day: string, rate: string): StoredQuote => ({ provider: 'ecb', base: 'EUR', quote: currency, day, asOf: `${day}T15:00:00Z`, rate });
  const doc = (day: string, rates: Record<string, string>): RateDocument => ({ provider: 'ecb', base: 'EUR', days: [{ day, asOf: `${day}T15:00:00Z`, rates }] });
  const r = (text: string): Rational => parseRate(text)!;
  const others = (values: Record<string, string[]>) => ({ numbers: (currency: string) => (values[currency] ?? []).map(r), percent: r('2') });

  it('holds moves of 5-fold and more either way, flags those beyond 25 % and serves them, passes the rest', () => {
    assert.equal(HOLD_FACTOR, 5);
    assert.equal(FLAG_PERCENT, '25');
    const stored = [quote('USD', '2026-02-10', '2'), quote('JPY', '2026-02-10', '2'), quote('NGN', '2026-02-10', '2'), quote('EGP', '2026-02-10', '2'), quote('GBP', '2026-02-10', '2')];
    const outcome = checkDocument({
      document: doc('2026-02-11', { USD: '10', JPY: '0.4', NGN: '9.99', EGP: '3', GBP: '2.5' }),
      stored,
      checked: [],
      today: '2026-02-11',
      at: AT,
    });
    // ×5 and ÷5 held; ×4.995 and +50 % flagged and served; +25 % exactly passes.
    assert.deepEqual(outcome.document.days[0]!.rates, { NGN: '9.99', EGP: '3', GBP: '2.5' });
    assert.deepEqual(
      outcome.checks.checked.map((c) => [c.currency, c.held]),
      [['USD', true], ['JPY', true], ['NGN', false], ['EGP', false]],
    );
  });

  it('serves a 5-fold move another provider confirms, and holds a correction beyond the others however small', () => {
    const outcome = checkDocument({
      document: { provider: 'ecb', base: 'EUR', days: [{ day: '2026-02-10', asOf: '2026-02-10T15:00:00Z', rates: { GBP: '0.9' } }, { day: '2026-02-11', asOf: '2026-02-11T15:00:00Z', rates: { USD: '10.01' } }] },
      stored: [quote('USD', '2026-02-10', '2'), quote('GBP', '2026-02-10', '0.87')],
      checked: [],
      others: others({ USD: ['10', '10.02'], GBP: ['0.87', '0.8701'] }),
      today: '2026-02-11',
      at: AT,
    });
    assert.deepEqual(outcome.document.days.map((d) => d.rates), [{ USD: '10.01' }]);
    assert.deepEqual(outcome.checks.revisions, []);
    assert.deepEqual(
      outcome.checks.checked.map((c) => [c.currency, c.kind, c.held]),
      [['GBP', 'correction', true], ['USD', 'move', false]],
    );
    assert.match(outcome.checks.checked[0]!.reason, /more than 2% from the other providers' median \(0.87005\)/);
  });

  it('releases a held number once another provider confirms it, at the next refresh', () => {
    const held: CheckedNumber = {
      provider: 'ecb', base: 'EUR', currency: 'USD', day: '2026-02-10', asOf: '2026-02-10T15:00:00Z', rate: '11', previous: '2', kind: 'move', held: true, reason: 'moves 5.5-fold', notedAt: AT,
    };
    const outcome = checkDocument({ document: doc('2026-02-11', { JPY: '180' }), stored: [], checked: [held], others: others({ USD: ['11.01'] }), today: '2026-02-11', at: AT });
    assert.deepEqual(outcome.document.days.map((d) => [d.day, d.rates]), [['2026-02-10', { USD: '11' }], ['2026-02-11', { JPY: '180' }]]);
    assert.equal(outcome.checks.checked[0]!.held, false);
    assert.match(outcome.checks.checked[0]!.reason, /confirmed by another provider/);
  });

  it('keeps a held number held when the next publication goes back, and never serves a correction of a closed day', () => {
    assert.equal(CORRECTABLE_DAYS, 7);
    assert.equal(isClosedDay('2026-02-03', '2026-02-11'), true);
    assert.equal(isClosedDay('2026-02-04', '2026-02-11'), false);
    const held: CheckedNumber = {
      provider: 'ecb', base: 'EUR', currency: 'USD', day: '2026-02-10', asOf: '2026-02-10T15:00:00Z', rate: '1189.4', previous: '1.1900', kind: 'move', held: true, reason: 'moves 1000-fold', notedAt: AT,
    };
    const back = checkDocument({ document: doc('2026-02-11', { USD: '1.19' }), stored: [quote('USD', '2026-02-09', '1.1900')], checked: [held], today: '2026-02-11', at: AT });
    assert.deepEqual(back.document.days.map((d) => [d.day, d.rates]), [['2026-02-11', { USD: '1.19' }]]);
    assert.deepEqual(back.checks.checked, []);
    const closed = checkDocument({
      document: doc('2026-02-02', { USD: '1.2' }),
      stored: [quote('USD', '2026-02-02', '1.19')],
      checked: [],
      others: others({ USD: ['1.2'] }),
      today: '2026-02-11',
      at: AT,
    });
    assert.deepEqual(closed.document.days, []);
    assert.equal(closed.checks.checked[0]!.held, true);
    assert.match(closed.checks.checked[0]!.reason, /more than 7 days old/);
  });

  it('lets a redenomination on its legal day explain a move, and nothing else', () => {
    assert.equal(replacedCurrencyExplains('SLL', '2022-06-30', '2022-07-01'), true);
    assert.equal(replacedCurrencyExplains('SLL', '2022-07-01', '2022-07-04'), false);
    assert.equal(replacedCurrencyExplains('SLL', '2022-06-28', '2022-06-30'), false);
    assert.equal(replacedCurrencyExplains('USD', '2022-06-30', '2022-07-01'), false);
    const redenominated = checkDocument({ document: doc('2022-07-01', { SLL: '13.9' }), stored: [quote('SLL', '2022-06-30', '13900')], checked: [], today: '2022-07-01', at: AT });
    assert.deepEqual(redenominated.document.days.map((d) => [d.day, d.rates]), [['2022-07-01', { SLL: '13.9' }]]);
    assert.equal(redenominated.checks.checked.some((c) => c.held), false);
    const unexplained = checkDocument({ document: doc('2022-07-04', { SLL: '13.9' }), stored: [quote('SLL', '2022-07-01', '13900')], checked: [], today: '2022-07-04', at: AT });
    assert.equal(unexplained.checks.checked[0]!.held, true);
  });
});
