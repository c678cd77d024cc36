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
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
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

export interface CentralBankStandIns {
  bdi: LoopbackServer;
  nbu: LoopbackServer;
  nbp: LoopbackServer;
  cnb: LoopbackServer;
  /** Every request by bank: path and query as received. */
  requests: Record<'bdi' | 'nbu' | 'nbp' | 'cnb', URL[]>;
  /** EXRATES_<ID>_URL for each. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
}

/** The stand-ins, publishing nothing dated after `today`. */
export async function startCentralBankStandIns(today: string): Promise<CentralBankStandIns> {
  const requests: CentralBankStandIns['requests'] = { bdi: [], nbu: [], nbp: [], cnb: [] };
  const listen = (bank: keyof CentralBankStandIns['requests'], answer: (url: URL, res: ServerResponse, req: IncomingMessage) => void) =>
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
      return send(res, 200, 'text/csv', recorded(file));
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

  const nbuText = recorded('nbu/01.json').toString('utf8');
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

  const nbpTables = rawObjects(recorded('nbp/01.json').toString('utf8'));
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

  return {
    bdi,
    nbu,
    nbp,
    cnb,
    requests,
    env: () => ({ EXRATES_BANCADITALIA_URL: bdi.origin, EXRATES_NBU_URL: nbu.origin, EXRATES_NBP_URL: nbp.origin, EXRATES_CNB_URL: cnb.origin }),
    async close() {
      await Promise.all([bdi.close(), nbu.close(), nbp.close(), cnb.close()]);
    },
  };
}
