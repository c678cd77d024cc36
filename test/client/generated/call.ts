/**
 * Calls every operation of the API through the clients hey-api and orval generate from the served
 * document (test/client/generated-clients.test.ts generates them beside this file, in a folder of
 * its own, and compiles the whole with tsc --strict before running it). The types written out
 * below are what the generated clients must give; each answer is also checked at run time.
 * Prints the operations called, as JSON.
 */
import { client } from './hey/client.gen';
import * as hey from './hey/sdk.gen';
import * as orval from './orval/api';

declare const process: { env: Record<string, string | undefined> };
const base = process.env.BASE!;
const key = process.env.KEY!;
const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`unexpected: ${what}`);
};
// The key goes once, in its header: never also into the URL (where logs and proxies keep it).
const keyOnce: typeof fetch = (input, init) => {
  check(!(input instanceof Request ? input.url : String(input)).includes('apikey='), 'the key in the URL');
  return fetch(input, init);
};
client.setConfig({ baseUrl: base, auth: () => key, fetch: keyOnce });

async function viaHey(): Promise<string[]> {
  const done: string[] = [];
  const rate = await hey.getRate({ query: { from: 'EUR', to: 'USD' }, throwOnError: true });
  const r: string = rate.data.rate; check(/^\d+(\.\d+)?$/.test(r) && rate.data.pair === 'EURUSD', 'getRate'); done.push('getRate');
  const conv = await hey.convertAmount({ query: { from: 'EUR', to: 'USD', amount: '100' }, throwOnError: true });
  const result: string = conv.data.result; check(/^\d+\.\d{2}$/.test(result), 'convertAmount'); done.push('convertAmount');
  const history = await hey.getHistory({ query: { from: 'EUR', to: 'USD', range: '1m' }, throwOnError: true });
  const count: number = history.data.count; check(count === history.data.points.length && count > 0, 'getHistory'); done.push('getHistory');
  const csv = await hey.getHistoryCsv({ query: { from: 'EUR', to: 'USD', range: '1m' }, parseAs: 'text', throwOnError: true });
  const csvText: string = csv.data; check(typeof csvText === 'string' && csvText.startsWith('date,rate\r\n'), 'getHistoryCsv'); done.push('getHistoryCsv');
  const nd = await hey.getHistoryNdjson({ query: { from: 'EUR', to: 'USD', range: '1m' }, parseAs: 'text', throwOnError: true });
  const ndText: string = nd.data; check(typeof ndText === 'string' && ndText.trim().split('\n').length === count + 1, 'getHistoryNdjson'); done.push('getHistoryNdjson');
  const rates = await hey.getRates({ query: { from: 'EUR', to: 'USD,GBP' }, throwOnError: true });
  check(rates.data.rates.length === 2, 'getRates'); done.push('getRates');
  const currencies = await hey.listCurrencies({ throwOnError: true });
  check(currencies.data.currencies.some((c) => c.code === 'USD'), 'listCurrencies'); done.push('listCurrencies');
  const providers = await hey.listProviders({ throwOnError: true });
  check(providers.data.providers.length > 0, 'listProviders'); done.push('listProviders');
  const usage = await hey.getUsage({ throwOnError: true });
  const remaining: number = usage.data.remaining; check(remaining >= 0, 'getUsage'); done.push('getUsage');
  const head = await hey.getRateHead({ query: { from: 'EUR', to: 'USD' }, throwOnError: true });
  check(head.response.status === 200, 'getRateHead'); done.push('getRateHead');
  const health = await hey.getHealth({ throwOnError: true }); check(health.response.status === 200, 'getHealth'); done.push('getHealth');
  const ready = await hey.getReadiness({ throwOnError: true }); check(ready.response.status === 200, 'getReadiness'); done.push('getReadiness');
  const bad = await hey.getRate({ query: { from: 'EUR', to: 'XXY' } });
  check(bad.error !== undefined && bad.response?.status === 400 && bad.error.code === 'invalid_currency', 'getRate 400'); done.push('getRate 400');
  return done;
}

async function viaOrval(): Promise<string[]> {
  const done: string[] = [];
  const options = { headers: { 'X-Api-Key': key } };
  const rate = await orval.getRate({ from: 'EUR', to: 'USD' }, options);
  check(rate.status === 200 && rate.data.pair === 'EURUSD', 'getRate'); done.push('getRate');
  const history = await orval.getHistory({ from: 'EUR', to: 'USD', range: '1m' }, options);
  check(history.status === 200 && history.data.count === history.data.points.length, 'getHistory'); done.push('getHistory');
  const csv = await orval.getHistoryCsv({ from: 'EUR', to: 'USD', range: '1m' }, options);
  check(csv.status === 200 && typeof csv.data === 'string' && csv.data.startsWith('date,rate'), 'getHistoryCsv'); done.push('getHistoryCsv');
  const usage = await orval.getUsage(options);
  check(usage.status === 200 && usage.data.remaining >= 0, 'getUsage'); done.push('getUsage');
  return done;
}

console.log(JSON.stringify({ hey: await viaHey(), orval: await viaOrval() }));
