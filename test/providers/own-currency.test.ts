/**
 * Each of the NBRB, the Bank of Russia, the CBU, the BCRA, the CBN, the CBA and the NBT serves its
 * own currency through the service: configured alone against its stand-in, a first load (the
 * retained years, fetched without pauses) stored in SQLite, then `/api/v1/rate` answers the bank's
 * published number of its newest day, per unit, for the dollar and for a currency it quotes per
 * 10, 100 or 1,000 units. The expectations are read from the recorded bytes with decimal.js.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Clock, Provider } from '../../src/core/ports.js';
import { syncProvider } from '../../src/core/refresh.js';
import { createBcraProvider } from '../../src/providers/bcra.js';
import { createCbaProvider } from '../../src/providers/cba.js';
import { createCbnProvider } from '../../src/providers/cbn.js';
import { createCbrProvider } from '../../src/providers/cbr.js';
import { createCbuProvider } from '../../src/providers/cbu.js';
import { createNbrbProvider } from '../../src/providers/nbrb.js';
import { createNbtProvider } from '../../src/providers/nbt.js';
import { closeFakeFeeds, createFeedsService } from '../support/apps.js';
import { startBankServer } from '../support/bank-server.js';
import {
  BCRA_TODAY,
  bcraByDay,
  bcraStandIn,
  CBA_TODAY,
  cbaLatest,
  cbaStandIn,
  CBN_TODAY,
  cbnRecording,
  cbnStandIn,
  CBR_TODAY,
  cbrDynamics,
  cbrRecordings,
  cbrStandIn,
  CBU_TODAY,
  cbuByDay,
  cbuStandIn,
  NBRB_TODAY,
  nbrbRecordings,
  nbrbStandIn,
  NBT_TODAY,
  nbtByDay,
  nbtStandIn,
  type StandIn,
} from '../support/bank-stand-ins.js';
import { startFakeUpstreams, type FakeUpstreams } from '../support/upstreams.js';
import { D, formatRate, type Dec } from '../e2e/independent.js';

interface Case {
  id: string;
  base: string;
  today: string;
  standIn: StandIn;
  create(options: { baseUrl: string; timeoutMs: number; clock: Clock; paceMs: number }): Provider;
  /** The newest recorded day and, per currency asked, the bank's number in its base per one unit, read from the bytes. */
  newest: string;
  published: Record<string, Dec>;
}

const text = (bytes: Buffer) => bytes.toString('utf8');
const comma = (value: string) => new D(value.replace(',', '.'));
/** A currency's record of 5 March in its recorded series (the day's rates of 25 April have no series recorded with them). */
const cbrRecord = (code: string) => {
  const id = new RegExp(`<Valute ID="([^"]+)"><NumCode>\\d+</NumCode><CharCode>${code}</CharCode>`).exec(new TextDecoder('windows-1251').decode(cbrRecordings[0]!.body))![1]!;
  return /<Record Date="05\.03\.2026" Id="[^"]+"><Nominal>(\d+)<\/Nominal><Value>([\d,]+)<\/Value>/.exec(cbrDynamics.get(id)!.body.toString('latin1'))!;
};
const nbrbEntry = (code: string) => new RegExp(`"Cur_Abbreviation":"${code}","Cur_Scale":(\\d+),[^}]*"Cur_OfficialRate":([\\d.]+)`).exec(text(nbrbRecordings[0]!.body))!;
const cbuEntry = (code: string) => new RegExp(`"Ccy":"${code}"[^}]*"Nominal":"(\\d+)","Rate":"([\\d.]+)"`).exec(text(cbuByDay.get(CBU_TODAY)!.body))!;
const nbtEntry = (code: string) => new RegExp(`<CharCode>${code}</CharCode>\\s*<Nominal>(\\d+)</Nominal>\\s*<Name>[^<]*</Name>\\s*<Value>([\\d.]+)</Value>`).exec(text(nbtByDay.get(NBT_TODAY)!.body))!;
const cbaEntry = (code: string) => new RegExp(`<ISO>${code}</ISO><Amount>(\\d+)</Amount><Rate>([\\d.]+)</Rate>`).exec(text(cbaLatest.body))!;
const perUnit = ([, units, value]: RegExpExecArray, read = (v: string) => new D(v)) => read(value!).div(units!);

const CASES: Case[] = [
  { id: 'nbrb', base: 'BYN', today: `${NBRB_TODAY}T15:00:00Z`, standIn: nbrbStandIn, create: createNbrbProvider, newest: NBRB_TODAY, published: { USD: perUnit(nbrbEntry('USD')), VND: perUnit(nbrbEntry('VND')) } },
  { id: 'cbr', base: 'RUB', today: `${CBR_TODAY}T22:00:00Z`, standIn: cbrStandIn, create: createCbrProvider, newest: '2026-03-05', published: { USD: perUnit(cbrRecord('USD'), comma), AMD: perUnit(cbrRecord('AMD'), comma) } },
  { id: 'cbu', base: 'UZS', today: `${CBU_TODAY}T12:00:00Z`, standIn: cbuStandIn, create: createCbuProvider, newest: CBU_TODAY, published: { USD: perUnit(cbuEntry('USD')), IDR: perUnit(cbuEntry('IDR')) } },
  {
    id: 'bcra',
    base: 'ARS',
    today: `${BCRA_TODAY}T20:00:00Z`,
    standIn: bcraStandIn,
    create: createBcraProvider,
    newest: BCRA_TODAY,
    published: {
      USD: new D(/"codigoMoneda":"USD"[^}]*"tipoCotizacion":([\d.]+)/.exec(text(bcraByDay.get(BCRA_TODAY)!.body))![1]!),
      VND: new D(/"codigoMoneda":"VND"[^}]*"tipoCotizacion":([\d.]+)/.exec(text(bcraByDay.get(BCRA_TODAY)!.body))![1]!).div(1000),
    },
  },
  { id: 'cbn', base: 'NGN', today: `${CBN_TODAY}T12:50:00Z`, standIn: cbnStandIn, create: createCbnProvider, newest: '2026-05-21', published: { USD: new D(/"currency":"US DOLLAR","ratedate":"2026-05-21"[^}]*"centralrate":"([\d.]+)"/.exec(text(cbnRecording.body))![1]!) } },
  { id: 'cba', base: 'AMD', today: `${CBA_TODAY}T10:48:00Z`, standIn: cbaStandIn, create: createCbaProvider, newest: '2026-03-18', published: { USD: perUnit(cbaEntry('USD')), IRR: perUnit(cbaEntry('IRR')) } },
  { id: 'nbt', base: 'TJS', today: `${NBT_TODAY}T09:00:00Z`, standIn: nbtStandIn, create: createNbtProvider, newest: NBT_TODAY, published: { USD: perUnit(nbtEntry('USD')), IRR: perUnit(nbtEntry('IRR')) } },
];

describe('each new bank serves its own currency through the service, exactly as published', () => {
  let fake: FakeUpstreams;
  before(async () => {
    fake = await startFakeUpstreams();
  });
  after(() => closeFakeFeeds(fake));

  for (const bank of CASES) {
    it(`${bank.id}: a first load from its stand-in, then ${Object.keys(bank.published).join(' and ')} in ${bank.base}`, async () => {
      const server = await startBankServer(bank.standIn);
      const service = await createFeedsService(fake, { env: { EXRATES_PROVIDERS: bank.id, [`EXRATES_${bank.id.toUpperCase()}_URL`]: server.origin, EXRATES_NOW: bank.today } });
      try {
        // The configured provider, made without pauses so that five years of requests take a moment.
        const provider = bank.create({ baseUrl: server.origin, timeoutMs: 5000, clock: service.deps.clock, paceMs: 0 });
        const outcome = await syncProvider(provider, service.deps.rates, service.deps.clock, service.deps.log);
        assert.equal(outcome.ok, true, outcome.error);
        assert.equal(outcome.latestDay, bank.newest);
        service.deps.book.invalidate();
        for (const [code, value] of Object.entries(bank.published)) {
          const answer = await service.get(`/api/v1/rate?from=${code}&to=${bank.base}`);
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          assert.equal(answer.body.rate, formatRate(value), `${code}→${bank.base}`);
          assert.equal(answer.body.asOf, `${bank.newest}T00:00:00Z`);
          const back = await service.get(`/api/v1/rate?from=${bank.base}&to=${code}`);
          assert.equal(back.body.rate, formatRate(new D(1).div(value)), `${bank.base}→${code}`);
        }
      } finally {
        await service.close();
        await server.close();
      }
    });
  }
});
