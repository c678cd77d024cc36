/**
 * Local stand-ins for central banks, each on its own loopback origin, answering at the paths and
 * queries the banks document with the recorded documents of `shared/data/central-banks/`, cut to
 * the range asked and to the stand-ins' "today" by slicing the recorded bytes (no value is
 * rewritten):
 *  - Banca d'Italia: `dailyRates` for the three recorded days (404 on others, as for a day
 *    without publication); `dailyTimeSeries` in the JSON layout the bank documents, built from the
 *    recorded days' rows (no recording of it exists).
 *  - NBU `exchange_site`, NBP table A (`tables/A/` and `tables/A/{from}/{to}/`, 404 for a range
 *    without table), CNB `daily` and `daily-year` (an empty year for years not recorded).
 *  - Bank of Canada Valet (`start_date`, optional `end_date`), Norges Bank SDMX-CSV
 *    (`startPeriod`/`endPeriod`), Riksbank SWEA (`ByGroup/130/{from}/{to}`), Bank of England
 *    database CSV (`Datefrom`/`Dateto`, `17/Mar/2026`), Bank of Israel SDMX CSV
 *    (`startperiod`/`endperiod`): the recorded observations or rows within the range.
 * A test may rewrite the NBP's, the NBU's or Banca d'Italia's recorded text (`wrong.nbp`,
 * `wrong.nbu`, `wrong.bdi`) to publish a wrong number on purpose.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { D, type Dec } from '../e2e/independent.js';
import { SHARED_DATA } from './data.js';
import { serveOnLoopback, type LoopbackServer } from './upstreams.js';

export const CENTRAL_BANKS_DIR = join(SHARED_DATA, 'central-banks');
export const recorded = (file: string): Buffer => readFileSync(join(CENTRAL_BANKS_DIR, file));

/** The recorded Banca d'Italia documents, by reference date. */
export const BDI_DAYS: Record<string, string> = { '2026-02-09': 'bdi/01.csv', '2026-02-10': 'bdi/02.csv', '2026-02-11': 'bdi/03.csv' };

export interface BdiRow {
  code: string;
  name: string;
  uic: string;
  rate: string;
  convention: string;
  day: string;
}

/** The rows of a recorded dailyRates CSV (no quoted fields in the recordings), trailer left out. */
export function bdiRows(csv: string): BdiRow[] {
  return csv
    .split('\n')
    .slice(1)
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const f = line.split(',');
      return { name: f[1]!, code: f[2]!, uic: f[3]!, rate: f[4]!, convention: f[5]!, day: f[6]! };
    });
}

/** The top-level `{…}` objects of a JSON array text, as their raw bytes' text (objects nest at most once). */
function rawObjects(text: string): string[] {
  const objects: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) objects.push(text.slice(start, i + 1));
    }
  }
  return objects;
}

const dotted = (day: string) => `${day.slice(8, 10)}.${day.slice(5, 7)}.${day.slice(0, 4)}`;
const fromCompact = (text: string) => `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}`;

const BANKS = ['bdi', 'nbu', 'nbp', 'cnb', 'boc', 'norgesbank', 'riksbank', 'boe', 'boi'] as const;
type Bank = (typeof BANKS)[number];

export interface CentralBankStandIns extends Record<Bank, LoopbackServer> {
  /** Every request by bank: path and query as received. */
  requests: Record<Bank, URL[]>;
  /** EXRATES_<ID>_URL for each. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `17 Mar 2026` or `17/Mar/2026` → `2026-03-17`. */
const fromBoeDate = (text: string): string => {
  const [d, m, y] = text.split(/[ /]/) as [string, string, string];
  return `${y}-${String(MONTHS.indexOf(m) + 1).padStart(2, '0')}-${d.padStart(2, '0')}`;
};

/** The header line and the data lines of a recorded CSV whose `column` (by name) is within the range. */
function csvWithin(text: string, column: string, from: string, to: string, day: (cell: string) => string = (cell) => cell): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const [header, ...lines] = text.split(eol).filter((line) => line !== '');
  const at = header!.split(',').indexOf(column);
  const kept = lines.filter((line) => {
    const d = day(line.split(',')[at]!);
    return d >= from && d <= to;
  });
  return [header, ...kept].map((line) => line + eol).join('');
}

/** Wrong numbers a test has a stand-in publish: a rewrite of its recorded text. */
export interface WrongNumbers {
  nbp?: (recordedText: string) => string;
  nbu?: (recordedText: string) => string;
  bdi?: (recordedText: string) => string;
}

/** Hryvnias per unit in the NBU's recorded entry of a day (`rate_per_unit`). */
export function nbuOn(day: string, code: string): Dec {
  const dotted = `${day.slice(8, 10)}.${day.slice(5, 7)}.${day.slice(0, 4)}`;
  const m = new RegExp(`"exchangedate":"${dotted.replace(/\./g, '\\.')}","r030":\\d+,"cc":"${code}".*?"rate_per_unit":([0-9.]+)`).exec(recorded('nbu/01.json').toString('utf8'))!;
  return new D(m[1]!);
}

/** A `wrong.nbu` rewrite: the NBU's dollar on every recorded day (`rate` and `rate_per_unit`, one unit), as `rewrite` makes it. */
export const wrongNbuDollar = (rewrite: (rate: Dec) => string) => (text: string) =>
  text.replace(/("cc":"USD",[^}]*?"rate":)([0-9.]+)(,"units":1,"rate_per_unit":)([0-9.]+)/g, (_, a: string, rate: string, b: string) => {
    const wrong = rewrite(new D(rate));
    return `${a}${wrong}${b}${wrong}`;
  });

/** Zlotys per unit in that day's recorded NBP table A. */
export function nbpOn(day: string, code: string): Dec {
  const table = recorded('nbp/01.json').toString('utf8').split('{"table":"A"').find((t) => t.includes(`"effectiveDate":"${day}"`))!;
  return new D(new RegExp(`"code":"${code}","mid":([0-9.]+)`).exec(table)![1]!);
}

/** A `wrong.nbp` rewrite: the NBP's dollar on every recorded day, as `rewrite` makes it of the recorded one. */
export const wrongNbpDollar = (rewrite: (mid: Dec) => string) => (text: string) =>
  text.replace(/"code":"USD","mid":([0-9.]+)/g, (_, mid: string) => `"code":"USD","mid":${rewrite(new D(mid))}`);
/** The dollar ×1000: a misplaced decimal point. */
export const TIMES_1000 = (mid: Dec) => mid.mul(1000).toFixed();

/** The stand-ins, publishing nothing dated after `today`. */
export async function startCentralBankStandIns(today: string, wrong: WrongNumbers = {}): Promise<CentralBankStandIns> {
  const requests = Object.fromEntries(BANKS.map((bank) => [bank, []])) as unknown as CentralBankStandIns['requests'];
  const earlier = (a: string, b: string) => (a < b ? a : b);
  const listen = (bank: Bank, answer: (url: URL, res: ServerResponse, req: IncomingMessage) => void) =>
    serveOnLoopback((req, res) => {
      const url = new URL(req.url ?? '/', 'http://bank.test');
      requests[bank].push(url);
      answer(url, res, req);
    });

  const bdiApi = '/terzevalute-wf-web/rest/v1.0';
  const bdi = await listen('bdi', (url, res, req) => {
    const q = url.searchParams;
    if (url.pathname === `${bdiApi}/dailyRates` && q.get('currencyIsoCode') === 'EUR' && q.get('lang') === 'en') {
      const day = q.get('referenceDate') ?? '';
      const file = BDI_DAYS[day];
      if (file === undefined || day > today) return send(res, 404, 'text/plain', 'No data');
      if (!String(req.headers.accept).includes('text/csv')) return send(res, 406, 'text/plain', 'ask for text/csv');
      return send(res, 200, 'text/csv', wrong.bdi ? wrong.bdi(recorded(file).toString('utf8')) : recorded(file));
    }
    if (url.pathname === `${bdiApi}/dailyTimeSeries` && q.get('currencyIsoCode') === 'EUR') {
      const code = q.get('baseCurrencyIsoCode') ?? '';
      const from = q.get('startDate') ?? '';
      const to = q.get('endDate') ?? '';
      const rows = Object.entries(BDI_DAYS)
        .filter(([day]) => day >= from && day <= to && day <= today)
        .flatMap(([, file]) => bdiRows(recorded(file).toString('utf8')).filter((r) => r.code === code))
        // A currency shared by several countries has a row per country in dailyRates, one in its series.
        .filter((row, i, all) => all.findIndex((r) => r.day === row.day) === i);
      const info = `{"totalRecords":${rows.length},"timezoneReference":"Dates refer to the Central European Time Zone","currency":"${rows[0]?.name ?? ''}","isoCode":"${code}","uicCode":"${rows[0]?.uic ?? ''}","exchangeConventionCode":"C"}`;
      const items = rows.map((r) => `{"referenceDate":"${r.day}","avgRate":"${r.rate}","exchangeConvention":"${r.convention}"}`);
      return send(res, 200, 'application/json', `{"resultsInfo":${info},"rates":[${items.join(',')}]}`);
    }
    send(res, 404, 'text/html', '<html><body>Not found</body></html>');
  });

  const nbuText = wrong.nbu ? wrong.nbu(recorded('nbu/01.json').toString('utf8')) : recorded('nbu/01.json').toString('utf8');
  const nbuEntries = rawObjects(nbuText);
  const nbu = await listen('nbu', (url, res) => {
    const q = url.searchParams;
    if (url.pathname !== '/NBU_Exchange/exchange_site' || !q.has('json') || !/^\d{8}$/.test(q.get('start') ?? '') || !/^\d{8}$/.test(q.get('end') ?? '')) {
      return send(res, 404, 'text/html', '<html><body>Not found</body></html>');
    }
    const from = fromCompact(q.get('start')!);
    // The NBU publishes tomorrow's rates today: a day after `today` is there too.
    const to = fromCompact(q.get('end')!);
    const wanted = new Set<string>();
    for (let day = from; day <= to; day = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) wanted.add(dotted(day));
    const kept = nbuEntries.filter((entry) => wanted.has(/"exchangedate":"([\d.]+)"/.exec(entry)![1]!));
    send(res, 200, 'application/json; charset=utf-8', kept.length === 0 ? '[\r\n]\r\n' : `[\r\n${kept.join('\r\n,')}\r\n]`);
  });

  const nbpText = recorded('nbp/01.json').toString('utf8');
  const nbpTables = rawObjects(wrong.nbp ? wrong.nbp(nbpText) : nbpText);
  const nbpDay = (table: string) => /"effectiveDate":"([\d-]+)"/.exec(table)![1]!;
  const nbp = await listen('nbp', (url, res) => {
    if (url.searchParams.get('format') !== 'json') return send(res, 400, 'text/plain', '400 BadRequest');
    const range = /^\/api\/exchangerates\/tables\/A\/(?:(\d{4}-\d{2}-\d{2})\/(\d{4}-\d{2}-\d{2})\/)?$/.exec(url.pathname);
    if (!range) return send(res, 404, 'text/plain', '404 NotFound');
    const published = nbpTables.filter((t) => nbpDay(t) <= today);
    const kept = range[1] === undefined ? published.slice(-1) : published.filter((t) => nbpDay(t) >= range[1]! && nbpDay(t) <= range[2]!);
    if (kept.length === 0) return send(res, 404, 'text/plain; charset=utf-8', '404 NotFound - Brak danych');
    send(res, 200, 'application/json; charset=utf-8', `[${kept.join(',')}]`);
  });

  const cnbRows = rawObjects(recorded('cnb/01.json').toString('utf8').slice('{"rates":'.length));
  const cnbDay = (row: string) => /"validFor":"([\d-]+)"/.exec(row)![1]!;
  const cnb = await listen('cnb', (url, res) => {
    const published = cnbRows.filter((r) => cnbDay(r) <= today);
    if (url.pathname === '/cnbapi/exrates/daily-year' && url.searchParams.get('lang') === 'EN') {
      const year = url.searchParams.get('year') ?? '';
      return send(res, 200, 'application/json', `{"rates":[${published.filter((r) => cnbDay(r).startsWith(`${year}-`)).join(',')}]}`);
    }
    if (url.pathname === '/cnbapi/exrates/daily' && url.searchParams.get('lang') === 'EN') {
      const newest = published.map(cnbDay).sort().at(-1);
      return send(res, 200, 'application/json', `{"rates":[${published.filter((r) => cnbDay(r) === newest).join(',')}]}`);
    }
    send(res, 404, 'application/json', '{"description":"not found"}');
  });

  const bocText = recorded('boc/01.json').toString('utf8');
  const bocOpen = /"observations"\s*:\s*\[/.exec(bocText)!;
  const bocHead = bocText.slice(0, bocOpen.index + bocOpen[0].length);
  const bocTail = bocText.slice(bocText.lastIndexOf(']'));
  const bocObservations = rawObjects(bocText.slice(bocHead.length, bocText.lastIndexOf(']')));
  const boc = await listen('boc', (url, res) => {
    const from = url.searchParams.get('start_date');
    if (url.pathname !== '/valet/observations/group/FX_RATES_DAILY/json' || from === null) return send(res, 404, 'application/json', '{"message":"not found"}');
    const to = earlier(url.searchParams.get('end_date') ?? today, today);
    const kept = bocObservations.filter((o) => {
      const day = /"d"\s*:\s*"([\d-]+)"/.exec(o)![1]!;
      return day >= from && day <= to;
    });
    send(res, 200, 'application/json', `${bocHead}\n${kept.join(',\n')}\n${bocTail}`);
  });

  const nbText = recorded('nb/01.csv').toString('utf8');
  const norgesbank = await listen('norgesbank', (url, res) => {
    const q = url.searchParams;
    if (url.pathname !== '/api/data/EXR/B..NOK.SP' || q.get('format') !== 'csvdata' || !q.has('startPeriod') || !q.has('endPeriod')) return send(res, 404, 'text/plain', 'NoRecordsFound');
    send(res, 200, 'text/csv', csvWithin(nbText, 'TIME_PERIOD', q.get('startPeriod')!, earlier(q.get('endPeriod')!, today)));
  });

  const rbObservations = rawObjects(recorded('rb/01.json').toString('utf8'));
  const riksbank = await listen('riksbank', (url, res) => {
    const range = /^\/swea\/v1\/Observations\/ByGroup\/130\/(\d{4}-\d{2}-\d{2})\/(\d{4}-\d{2}-\d{2})$/.exec(url.pathname);
    if (!range) return send(res, 404, 'application/json', '{"statusCode":404}');
    const to = earlier(range[2]!, today);
    const kept = rbObservations.filter((o) => {
      const day = /"date":"([\d-]+)"/.exec(o)![1]!;
      return day >= range[1]! && day <= to;
    });
    send(res, 200, 'application/json; charset=utf-8', `[${kept.join(',')}]`);
  });

  const boeText = recorded('boe/01.csv').toString('utf8');
  const boe = await listen('boe', (url, res) => {
    const q = url.searchParams;
    if (url.pathname !== '/boeapps/database/_iadb-fromshowcolumns.asp' || q.get('CSVF') !== 'TN' || !q.has('Datefrom') || !q.has('Dateto')) {
      return send(res, 404, 'text/html', '<html><body>Not found</body></html>');
    }
    send(res, 200, 'application/csv', csvWithin(boeText, 'DATE', fromBoeDate(q.get('Datefrom')!), earlier(fromBoeDate(q.get('Dateto')!), today), fromBoeDate));
  });

  const boiText = recorded('boi/01.csv').toString('utf8');
  const boi = await listen('boi', (url, res) => {
    const q = url.searchParams;
    if (url.pathname !== '/FusionEdgeServer/sdmx/v2/data/dataflow/BOI.STATISTICS/EXR/1.0/' || q.get('format') !== 'csv' || !q.has('startperiod') || !q.has('endperiod')) {
      return send(res, 404, 'text/plain', 'not found');
    }
    send(res, 200, 'text/csv', csvWithin(boiText, 'TIME_PERIOD', q.get('startperiod')!, earlier(q.get('endperiod')!, today)));
  });

  const servers: Record<Bank, LoopbackServer> = { bdi, nbu, nbp, cnb, boc, norgesbank, riksbank, boe, boi };
  return {
    ...servers,
    requests,
    env: () => ({
      EXRATES_BANCADITALIA_URL: bdi.origin,
      EXRATES_NBU_URL: nbu.origin,
      EXRATES_NBP_URL: nbp.origin,
      EXRATES_CNB_URL: cnb.origin,
      EXRATES_BOC_URL: boc.origin,
      EXRATES_NORGESBANK_URL: norgesbank.origin,
      EXRATES_RIKSBANK_URL: riksbank.origin,
      EXRATES_BOE_URL: boe.origin,
      EXRATES_BOI_URL: boi.origin,
    }),
    async close() {
      await Promise.all(Object.values(servers).map((server) => server.close()));
    },
  };
}
