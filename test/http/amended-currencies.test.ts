/**
 * The currency list as amended, over real HTTP on stand-ins for the ECB and Banca d'Italia serving
 * their recorded documents, with the legal parities beside them: XCG (added to ISO 4217 after the
 * package's list) is Banca d'Italia's number, ANG (which it replaced) is answered through it, and
 * the dollar parity agrees with the bank's numbers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeFakeFeeds, createFeedsService, type FeedsService } from '../support/apps.js';
import { BDI_DAYS, bdiRows, recorded, startCentralBankStandIns, type CentralBankStandIns } from '../support/central-banks.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate } from '../e2e/independent.js';

/** Banca d'Italia's newest recorded day; the stand-ins' today is the day after. */
const DAY = '2026-02-11';
const TODAY = '2026-02-12';
const bdiOn = (day: string, code: string): string => bdiRows(recorded(BDI_DAYS[day]!).toString('utf8')).find((r) => r.code === code)!.rate;

describe('currencies added to ISO 4217 since the package, and the ones they replaced', () => {
  let fake: FakeUpstreams;
  let banks: CentralBankStandIns;
  let service: FeedsService;
  before(async () => {
    fake = await startFakeUpstreams();
    fake.ecb.historyThrough = DAY;
    banks = await startCentralBankStandIns(TODAY);
    service = await createFeedsService(fake, {
      env: { ...banks.env(), EXRATES_PROVIDERS: 'ecb,bancaditalia,peg', EXRATES_NOW: `${TODAY}T12:00:00Z` },
    });
    const outcomes = await service.deps.refresher.refreshAll();
    assert.ok(
      outcomes.every((o) => o.ok),
      JSON.stringify(outcomes.filter((o) => !o.ok)),
    );
  });
  after(async () => {
    await service?.close();
    await banks?.close();
    await closeFakeFeeds(fake);
  });

  const get = (url: string) => service.app.inject({ method: 'GET', url, headers: { 'x-api-key': service.key } });

  it("answers EUR→XCG with Banca d'Italia's number, as published", async () => {
    // Banca d'Italia loads a currency on its first request; asked of it, it loads USD and XCG now.
    const asked = await get('/api/v1/rate?from=USD&to=XCG&source=bancaditalia');
    assert.equal(asked.statusCode, 200, asked.body);
    assert.equal(asked.json().rate, formatRate(new D(bdiOn(DAY, 'XCG')).div(bdiOn(DAY, 'USD'))));
    // Held, it comes before the parities in the order of preference.
    const response = await get('/api/v1/rate?from=EUR&to=XCG&expand=provenance');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.rate, '2.1301');
    assert.deepEqual(body.provenance.providers, ['bancaditalia']);
    assert.equal(body.provenance.day, DAY);
  });

  it('answers ANG, replaced by XCG at par in 2025, through XCG, saying so', async () => {
    const body = (await get('/api/v1/rate?from=EUR&to=ANG&expand=provenance')).json();
    assert.equal(body.rate, bdiOn(DAY, 'XCG'));
    assert.deepEqual(body.provenance.replaced.map((r: { currency: string; successor: string; ratio: string }) => [r.currency, r.successor, r.ratio]), [['ANG', 'XCG', '1']]);
  });

  it("answers USD→XCG by its parity with source=peg, and without it by the bank's numbers, which agree with it", async () => {
    assert.equal((await get('/api/v1/rate?from=USD&to=XCG&source=peg')).json().rate, '1.79');
    const market = (await get('/api/v1/rate?from=USD&to=XCG')).json().rate as string;
    // Banca d'Italia holds both since the first request above: its own cross of the day, rounded once.
    assert.equal(market, formatRate(new D(bdiOn(DAY, 'XCG')).div(bdiOn(DAY, 'USD'))));
    assert.ok(new D(market).minus('1.79').abs().lt('0.0179'), `${market} lies within 1% of the parity`);
  });
});
