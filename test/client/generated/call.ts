/**
 * Calls every operation of the API through the clients hey-api and orval generate from the served
 * document (test/client/generated-clients.test.ts generates them beside this file, in a folder of
 * its own, and compiles the whole with tsc --strict before running it). The types written out
 * below are what the generated clients must give; each answer is also checked at run time.
 * Prints, as JSON, the operations each client called.
 */
import { client } from './hey/client.gen';
import * as hey from './hey/sdk.gen';
import * as orval from './orval/api';

declare const process: { env: Record<string, string | undefined> };
const key = process.env.KEY!;
const metricsToken = process.env.METRICS_TOKEN!;

const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`unexpected: ${what}`);
};
// The key goes once, in its header: never also into the URL (where logs and proxies keep it).
const keyOnce: typeof fetch = (input, init) => {
  check(!(input instanceof Request ? input.url : String(input)).includes('apikey='), 'the key in the URL');
  return fetch(input, init);
};
client.setConfig({ baseUrl: process.env.BASE!, fetch: keyOnce, auth: (auth) => (auth.scheme === 'bearer' ? metricsToken : key) });

const pair = { from: 'EUR', to: 'USD' } as const;
const month = { ...pair, range: '1m' } as const;
const decimal = /^\d+(\.\d+)?$/;

async function viaHey(): Promise<string[]> {
  const called: string[] = [];
  const head = async (name: string, call: () => Promise<{ response?: Response }>) => {
    const { response } = await call();
    check(response?.status === 200, name);
    called.push(name);
  };
  const rate = await hey.getRate({ query: pair, throwOnError: true });
  const rateText: string = rate.data.rate;
  check(decimal.test(rateText) && rate.data.pair === 'EURUSD', 'getRate');
  called.push('getRate');
  await head('getRateHead', () => hey.getRateHead({ query: pair, throwOnError: true }));
  const conversion = await hey.convertAmount({ query: { ...pair, amount: '100' }, throwOnError: true });
  const result: string = conversion.data.result;
  check(/^\d+\.\d{2}$/.test(result), 'convertAmount');
  called.push('convertAmount');
  await head('convertAmountHead', () => hey.convertAmountHead({ query: { ...pair, amount: '100' }, throwOnError: true }));
  const history = await hey.getHistory({ query: month, throwOnError: true });
  const count: number = history.data.count;
  check(count === history.data.points.length && count > 0, 'getHistory');
  called.push('getHistory');
  await head('getHistoryHead', () => hey.getHistoryHead({ query: month, throwOnError: true }));
  const csv = await hey.getHistoryCsv({ query: month, parseAs: 'text', throwOnError: true });
  const csvText: string = csv.data;
  check(csvText.startsWith('date,rate\r\n') && csvText.trim().split('\r\n').length === count + 1, 'getHistoryCsv');
  called.push('getHistoryCsv');
  await head('getHistoryCsvHead', () => hey.getHistoryCsvHead({ query: month, throwOnError: true }));
  const ndjson = await hey.getHistoryNdjson({ query: month, parseAs: 'text', throwOnError: true });
  const ndjsonText: string = ndjson.data;
  check(ndjsonText.trim().split('\n').length === count + 1, 'getHistoryNdjson');
  called.push('getHistoryNdjson');
  await head('getHistoryNdjsonHead', () => hey.getHistoryNdjsonHead({ query: month, throwOnError: true }));
  const rates = await hey.getRates({ query: { from: 'EUR', to: 'USD,GBP' }, throwOnError: true });
  check(rates.data.rates.length === 2 && rates.data.rates.every((entry) => decimal.test(entry.rate)), 'getRates');
  called.push('getRates');
  await head('getRatesHead', () => hey.getRatesHead({ query: { from: 'EUR', to: 'USD,GBP' }, throwOnError: true }));
  const currencies = await hey.listCurrencies({ throwOnError: true });
  check(currencies.data.currencies.some((currency) => currency.code === 'USD'), 'listCurrencies');
  called.push('listCurrencies');
  await head('listCurrenciesHead', () => hey.listCurrenciesHead({ throwOnError: true }));
  const providers = await hey.listProviders({ throwOnError: true });
  check(providers.data.providers.length > 0, 'listProviders');
  called.push('listProviders');
  await head('listProvidersHead', () => hey.listProvidersHead({ throwOnError: true }));
  const usage = await hey.getUsage({ throwOnError: true });
  const remaining: number = usage.data.remaining;
  check(remaining >= 0 && usage.data.limit > 0, 'getUsage');
  called.push('getUsage');
  await head('getUsageHead', () => hey.getUsageHead({ throwOnError: true }));
  const health = await hey.getHealth({ throwOnError: true });
  check(health.response.status === 200, 'getHealth');
  called.push('getHealth');
  await head('getHealthHead', () => hey.getHealthHead({ throwOnError: true }));
  const readiness = await hey.getReadiness({ throwOnError: true });
  check(readiness.response.status === 200, 'getReadiness');
  called.push('getReadiness');
  await head('getReadinessHead', () => hey.getReadinessHead({ throwOnError: true }));
  const metrics = await hey.getMetrics({ parseAs: 'text', throwOnError: true });
  check(typeof metrics.data === 'string' && metrics.data.includes('exrates_'), 'getMetrics');
  called.push('getMetrics');
  await head('getMetricsHead', () => hey.getMetricsHead({ throwOnError: true }));
  // An error is typed as the problem it is.
  const refused = await hey.getRate({ query: { from: 'EUR', to: 'XXY' } });
  const code: string | undefined = refused.error?.code;
  check(refused.response?.status === 400 && code === 'invalid_currency', 'getRate 400');
  return called;
}

async function viaOrval(): Promise<string[]> {
  const called: string[] = [];
  const keyed = { headers: { 'X-Api-Key': key } };
  const head = async (name: string, call: () => Promise<{ status: number; data: void }>) => {
    check((await call()).status === 200, name);
    called.push(name);
  };
  const rate = await orval.getRate(pair, keyed);
  check(rate.status === 200 && rate.data.pair === 'EURUSD' && decimal.test(rate.data.rate), 'getRate');
  called.push('getRate');
  await head('getRateHead', () => orval.getRateHead(pair, keyed));
  const conversion = await orval.convertAmount({ ...pair, amount: '100' }, keyed);
  check(conversion.status === 200 && /^\d+\.\d{2}$/.test(conversion.data.result), 'convertAmount');
  called.push('convertAmount');
  await head('convertAmountHead', () => orval.convertAmountHead({ ...pair, amount: '100' }, keyed));
  const history = await orval.getHistory(month, keyed);
  const count = history.status === 200 ? history.data.count : -1;
  check(count > 0 && history.status === 200 && count === history.data.points.length, 'getHistory');
  called.push('getHistory');
  await head('getHistoryHead', () => orval.getHistoryHead(month, keyed));
  const csv = await orval.getHistoryCsv(month, keyed);
  check(csv.status === 200 && typeof csv.data === 'string' && csv.data.startsWith('date,rate\r\n'), 'getHistoryCsv');
  called.push('getHistoryCsv');
  await head('getHistoryCsvHead', () => orval.getHistoryCsvHead(month, keyed));
  // NDJSON is a stream of lines: orval hands over the response to read as one.
  const ndjson = await orval.getHistoryNdjson(month, keyed);
  check(ndjson.status === 200 && (await ndjson.stream.text()).trim().split('\n').length === count + 1, 'getHistoryNdjson');
  called.push('getHistoryNdjson');
  await head('getHistoryNdjsonHead', () => orval.getHistoryNdjsonHead(month, keyed));
  const rates = await orval.getRates({ from: 'EUR', to: 'USD,GBP' }, keyed);
  check(rates.status === 200 && rates.data.rates.length === 2, 'getRates');
  called.push('getRates');
  await head('getRatesHead', () => orval.getRatesHead({ from: 'EUR', to: 'USD,GBP' }, keyed));
  const currencies = await orval.listCurrencies(keyed);
  check(currencies.status === 200 && currencies.data.currencies.some((currency) => currency.code === 'USD'), 'listCurrencies');
  called.push('listCurrencies');
  await head('listCurrenciesHead', () => orval.listCurrenciesHead(keyed));
  const providers = await orval.listProviders(keyed);
  check(providers.status === 200 && providers.data.providers.length > 0, 'listProviders');
  called.push('listProviders');
  await head('listProvidersHead', () => orval.listProvidersHead(keyed));
  const usage = await orval.getUsage(keyed);
  check(usage.status === 200 && usage.data.remaining >= 0, 'getUsage');
  called.push('getUsage');
  await head('getUsageHead', () => orval.getUsageHead(keyed));
  check((await orval.getHealth()).status === 200, 'getHealth');
  called.push('getHealth');
  await head('getHealthHead', () => orval.getHealthHead());
  check((await orval.getReadiness()).status === 200, 'getReadiness');
  called.push('getReadiness');
  await head('getReadinessHead', () => orval.getReadinessHead());
  const scrape = { headers: { authorization: `Bearer ${metricsToken}` } };
  const metrics = await orval.getMetrics(scrape);
  check(metrics.status === 200 && typeof metrics.data === 'string' && metrics.data.includes('exrates_'), 'getMetrics');
  called.push('getMetrics');
  await head('getMetricsHead', () => orval.getMetricsHead(scrape));
  return called;
}

console.log(JSON.stringify({ hey: await viaHey(), orval: await viaOrval() }));
