/**
 * Local stand-ins for the two live upstreams, on loopback:
 *  - ECB, from the real shared files: `eurofxref-daily.xml` is the published 2026-02-11 file;
 *    `eurofxref-hist.zip` and `eurofxref-hist-90d.xml` are the real history CSV cut at a chosen
 *    day (the files as ECB served them that evening), zipped with fflate or written in the 90-day
 *    XML layout.
 *  - Frankfurter v2 (`/v2/currencies`, `/v2/rates`), generating a deterministic, plausible series
 *    for a few currencies ECB does not quote (NGN, KES, GHS): one row per weekday, rates per EUR
 *    written as JSON number text the way a float serializer writes them.
 *
 * Each upstream can be switched into a failure mode and slowed down. Each listens on its own port,
 * so "connection refused" is real: the upstream's listener is closed, and reopened on the same
 * port when the upstream is switched back.
 *
 * Also here: `serveOnLoopback`, the one-off upstream a provider test answers route by route.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { ECB_CSV, ECB_XML_DIR } from './data.js';
import { listenOnLoopback } from './ports.js';

export const FAILURE_MODES = [
  'http500',
  'hang',
  'truncated',
  'zero-rate',
  'negative',
  'non-numeric',
  'future-date',
  'partial',
  'refused',
] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];
export type UpstreamMode = 'ok' | FailureMode;

/** The service's fixed clock: the day after the real daily file, before that day's 16:00 CET publication. */
export const FEEDS_NOW = '2026-02-12T12:00:00Z';
export const TODAY = '2026-02-12';
/** The reference date of the real daily file served as ECB's latest. */
export const ECB_DAILY_DAY = '2026-02-11';
/** By default the history files end the business day before the daily file, so a refresh has a new day to add. */
export const ECB_HISTORY_THROUGH = '2026-02-10';
/** A day after the service's today, for documents that claim to come from the future. */
export const FUTURE_DAY = '2026-02-13';
/** The last day the fake Frankfurter has published. */
export const FRANKFURTER_LATEST = '2026-02-11';

export const EXOTIC_CURRENCIES = ['GHS', 'KES', 'NGN'] as const;
/** What the fake Frankfurter lists: its base and the currencies it has series for. */
export const FRANKFURTER_LISTED = ['EUR', 'GHS', 'KES', 'NGN'] as const;

// ---------------------------------------------------------------------------------------------
// Calendar helpers (kept independent of src/core/time.ts, so the fake data is not derived from it)

export function plusDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function isWeekday(day: string): boolean {
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
  return weekday !== 0 && weekday !== 6;
}

export function weekdaysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = plusDays(day, 1)) if (isWeekday(day)) days.push(day);
  return days;
}

// ---------------------------------------------------------------------------------------------
// The real ECB history, read once

export interface EcbRow {
  day: string;
  /** Units per EUR exactly as written in the CSV; currencies marked N/A are absent. */
  rates: Record<string, string>;
  /** The CSV line exactly as published. */
  line: string;
}

let ecbCsvCache: { header: string; rows: EcbRow[] } | undefined;

/** The shared ECB CSV: header line and rows, newest first as published. */
export function ecbHistory(): { header: string; rows: EcbRow[] } {
  if (ecbCsvCache) return ecbCsvCache;
  const lines = readFileSync(ECB_CSV, 'utf8').split('\n').filter((l) => l !== '');
  const header = lines[0]!;
  const codes = header.split(',').slice(1, -1);
  const rows = lines.slice(1).map((line) => {
    const fields = line.split(',');
    const rates: Record<string, string> = {};
    codes.forEach((code, i) => {
      const value = fields[i + 1]!;
      if (value !== 'N/A') rates[code] = value;
    });
    return { day: fields[0]!, rates, line };
  });
  ecbCsvCache = { header, rows };
  return ecbCsvCache;
}

/** ECB's published row for a day, or undefined on a non-publication day. */
export function ecbRow(day: string): EcbRow | undefined {
  return ecbHistory().rows.find((r) => r.day === day);
}

/** ECB publication days within a range, ascending. */
export function ecbDaysBetween(from: string, to: string): string[] {
  return ecbHistory()
    .rows.map((r) => r.day)
    .filter((d) => d >= from && d <= to)
    .reverse();
}

export const ECB_DAILY_XML = readFileSync(join(ECB_XML_DIR, `eurofxref-daily_${ECB_DAILY_DAY}.xml`));

// ---------------------------------------------------------------------------------------------
// The fake Frankfurter series

interface SeriesShape {
  /** Scaled value on 2021-01-01 and on 2026-02-11, in units of 10^-decimals. */
  start: number;
  end: number;
  decimals: number;
  /** Amplitude of the day-to-day wobble, in the same units. */
  wobble: number;
}

/** Roughly the real paths of these currencies against the euro over five years. */
const SHAPES: Record<(typeof EXOTIC_CURRENCIES)[number], SeriesShape> = {
  NGN: { start: 46_012, end: 163_452, decimals: 2, wobble: 900 },
  KES: { start: 13_385, end: 15_038, decimals: 2, wobble: 120 },
  GHS: { start: 71_544, end: 126_500, decimals: 4, wobble: 900 },
};

const SHAPE_FROM = Date.UTC(2021, 0, 1);
const SHAPE_TO = Date.UTC(2026, 1, 11);

/**
 * The fake Frankfurter's rate of a currency per EUR on a day, as the JSON number text it sends
 * (a float serializer drops trailing zeros: 1634.5, not 1634.50).
 */
export function frankfurterRate(code: string, day: string): string {
  const shape = SHAPES[code as keyof typeof SHAPES];
  if (!shape) throw new RangeError(`the fake Frankfurter has no series for ${code}`);
  const t = Date.parse(`${day}T00:00:00Z`);
  const index = Math.round((t - SHAPE_FROM) / 86_400_000);
  const trend = shape.start + Math.round(((shape.end - shape.start) * (t - SHAPE_FROM)) / (SHAPE_TO - SHAPE_FROM));
  const wobble = ((index * 7_919 + code.charCodeAt(0) * 104_729) % (2 * shape.wobble + 1)) - shape.wobble;
  const units = String(Math.max(1, trend + wobble)).padStart(shape.decimals + 1, '0');
  const text = shape.decimals > 0 ? `${units.slice(0, -shape.decimals)}.${units.slice(-shape.decimals)}` : units;
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

// ---------------------------------------------------------------------------------------------
// Document builders and corruptions

function ecbHistoryCsv(through: string): string {
  const { header, rows } = ecbHistory();
  return `${header}\n${rows
    .filter((r) => r.day <= through)
    .map((r) => r.line)
    .join('\n')}\n`;
}

/** ECB's 90-day file layout: one line per trading day, newest first, double-quoted attributes, no final newline. */
function ecbNinetyDayXml(through: string): string {
  const { header } = ecbHistory();
  const codes = header.split(',').slice(1, -1);
  const rows = ecbHistory().rows.filter((r) => r.day <= through && r.day > plusDays(through, -90));
  const head =
    '<?xml version="1.0" encoding="UTF-8"?><gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><gesmes:subject>Reference rates</gesmes:subject><gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender><Cube>';
  const days = rows.map(
    (r) => `<Cube time="${r.day}">${codes
      .filter((c) => r.rates[c] !== undefined)
      .map((c) => `<Cube currency="${c}" rate="${r.rates[c]}"/>`)
      .join('')}</Cube>`,
  );
  return `${head}${days.join('\n')}</Cube></gesmes:Envelope>`;
}

const half = (bytes: Buffer): Buffer => bytes.subarray(0, Math.floor(bytes.length / 2));

/** Applies a data corruption to ECB XML (daily or 90-day): it hits the newest day, which comes first. */
function corruptEcbXml(xml: string, mode: UpstreamMode): string {
  const firstRate = /(rate=['"])([^'"]*)(['"])/;
  switch (mode) {
    case 'zero-rate':
      return xml.replace(firstRate, (_m, a, v: string, b) => `${a}${v.replace(/\d/g, '0')}${b}`);
    case 'negative':
      return xml.replace(firstRate, (_m, a, v: string, b) => `${a}-${v}${b}`);
    case 'non-numeric':
      return xml.replace(firstRate, (_m, a, _v, b) => `${a}NaN${b}`);
    case 'future-date':
      return xml.replace(/time=(['"])\d{4}-\d{2}-\d{2}\1/, (_m, q: string) => `time=${q}${FUTURE_DAY}${q}`);
    case 'partial': {
      // Keep the first three currencies of the newest day, the way a half-written file would look.
      let kept = 0;
      const dayStart = xml.search(/<Cube time=/);
      const dayEnd = xml.indexOf('</Cube>', dayStart);
      const day = xml.slice(dayStart, dayEnd).replace(/\s*<Cube currency=[^>]*\/>/g, (m) => (++kept <= 3 ? m : ''));
      return xml.slice(0, dayStart) + day + xml.slice(dayEnd);
    }
    default:
      return xml;
  }
}

/** Applies a data corruption to the ECB CSV: it hits the newest row, the second line. */
function corruptEcbCsv(csv: string, mode: UpstreamMode): string {
  const [header, newest, ...rest] = csv.split('\n');
  const fields = newest!.split(',');
  const firstValue = fields.findIndex((f, i) => i > 0 && f !== 'N/A' && f !== '');
  switch (mode) {
    case 'zero-rate':
      fields[firstValue] = '0';
      break;
    case 'negative':
      fields[firstValue] = `-${fields[firstValue]}`;
      break;
    case 'non-numeric':
      fields[firstValue] = 'NaN';
      break;
    case 'future-date':
      fields[0] = FUTURE_DAY;
      break;
    case 'partial': {
      let kept = 0;
      for (let i = 1; i < fields.length - 1; i++) if (fields[i] !== 'N/A' && ++kept > 3) fields[i] = 'N/A';
      break;
    }
    default:
      break;
  }
  return [header, fields.join(','), ...rest].join('\n');
}

interface FrankfurterRow {
  date: string;
  quote: string;
  /** JSON text of the rate: a number literal, or anything else when corrupted. */
  rate: string;
}

function corruptFrankfurterRows(rows: FrankfurterRow[], quotes: string[], mode: UpstreamMode): FrankfurterRow[] {
  if (rows.length === 0) return rows;
  const newest = rows.length - 1;
  const replaceNewest = (change: Partial<FrankfurterRow>) => rows.map((r, i) => (i === newest ? { ...r, ...change } : r));
  switch (mode) {
    case 'zero-rate':
      return replaceNewest({ rate: '0' });
    case 'negative':
      return replaceNewest({ rate: `-${rows[newest]!.rate}` });
    case 'non-numeric':
      return replaceNewest({ rate: '"n/a"' });
    case 'future-date':
      return replaceNewest({ date: FUTURE_DAY });
    case 'partial': {
      // Most of the currencies asked for are missing from the answer.
      const kept = new Set(quotes.slice(0, Math.floor(quotes.length / 3)));
      return rows.filter((r) => kept.has(r.quote));
    }
    default:
      return rows;
  }
}

// ---------------------------------------------------------------------------------------------
// The servers

export type UpstreamName = 'ecb' | 'frankfurter';

export interface Upstream {
  readonly name: UpstreamName;
  /** Base URL for the service's configuration (EXRATES_ECB_URL / EXRATES_FRANKFURTER_URL). */
  readonly url: string;
  readonly mode: UpstreamMode;
  /** Switches the failure mode; 'refused' closes this upstream's listener, any other mode reopens it. */
  setMode(mode: UpstreamMode): Promise<void>;
  /** Delay before every answer of this upstream, in milliseconds. */
  delayMs: number;
  /** Requests received (also while hanging), by path without the query. */
  calls(path?: string): number;
}

export interface EcbUpstream extends Upstream {
  /** Last day in the history files (zip and 90-day XML). */
  historyThrough: string;
}

export interface FrankfurterUpstream extends Upstream {
  /** The last weekday published: the answer to a request without from/to, and the end of every series. */
  latestDay: string;
}

export interface FakeUpstreams {
  ecb: EcbUpstream;
  frankfurter: FrankfurterUpstream;
  /** Every request received, path and query, in arrival order. */
  requests: URL[];
  /** Requests received, by exact path (e.g. '/ecb/eurofxref-daily.xml', '/frankfurter/v2/rates'). */
  calls(path: string): number;
  totalCalls(): number;
  /** Back to healthy, no delay, default dates, counters at zero. */
  reset(): Promise<void>;
  /** EXRATES_* variables pointing the service at these upstreams. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const ECB_PREFIX = '/ecb';
const FRANKFURTER_PREFIX = '/frankfurter';

interface Listener {
  server: Server;
  port: number;
  open: boolean;
  sockets: Set<Socket>;
}

export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const requests: URL[] = [];
  const counts = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const delays = new Set<NodeJS.Timeout>();
  const zipCache = new Map<string, Buffer>();

  const state = {
    ecb: { mode: 'ok' as UpstreamMode, delayMs: 0, historyThrough: ECB_HISTORY_THROUGH },
    frankfurter: { mode: 'ok' as UpstreamMode, delayMs: 0, latestDay: FRANKFURTER_LATEST },
  };

  function send(res: ServerResponse, status: number, contentType: string, body: Buffer, mode: UpstreamMode): void {
    if (mode === 'truncated') {
      // A cut-off document with a consistent length: only the parser can tell it is incomplete.
      const cut = half(body);
      res.writeHead(status, { 'content-type': contentType, 'content-length': String(cut.length) }).end(cut);
      return;
    }
    res.writeHead(status, { 'content-type': contentType, 'content-length': String(body.length) }).end(body);
  }

  function ecbAnswer(path: string, res: ServerResponse): void {
    const { mode, historyThrough } = state.ecb;
    switch (path) {
      case '/eurofxref-daily.xml':
        return send(res, 200, 'text/xml', Buffer.from(corruptEcbXml(ECB_DAILY_XML.toString('utf8'), mode)), mode);
      case '/eurofxref-hist-90d.xml':
        return send(res, 200, 'text/xml', Buffer.from(corruptEcbXml(ecbNinetyDayXml(historyThrough), mode)), mode);
      case '/eurofxref-hist.zip': {
        const key = `${historyThrough}:${mode}`;
        let zip = zipCache.get(key);
        if (!zip) {
          const csv = corruptEcbCsv(ecbHistoryCsv(historyThrough), mode);
          zip = Buffer.from(zipSync({ 'eurofxref-hist.csv': Buffer.from(csv) }, { level: 6 }));
          zipCache.set(key, zip);
        }
        return send(res, 200, 'application/zip', zip, mode);
      }
      default:
        res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not found</body></html>');
    }
  }

  function frankfurterAnswer(url: URL, path: string, res: ServerResponse): void {
    const { mode, latestDay } = state.frankfurter;
    const json = (status: number, text: string) => send(res, status, 'application/json', Buffer.from(text), mode);
    if (path === '/v2/currencies') {
      const names: Record<string, string> = { EUR: 'Euro', GHS: 'Ghanaian Cedi', KES: 'Kenyan Shilling', NGN: 'Nigerian Naira' };
      const items = FRANKFURTER_LISTED.map((code) => `{"iso_code":"${code}","iso_numeric":null,"name":"${names[code]}","symbol":null,"start_date":"2001-12-03","end_date":"${latestDay}"}`);
      return json(200, `[${items.join(',')}]`);
    }
    if (path !== '/v2/rates') return json(404, '{"message":"not found"}');
    const base = url.searchParams.get('base') ?? 'EUR';
    if (base !== 'EUR') return json(422, '{"message":"the fake serves base EUR only"}');
    const quotes = (url.searchParams.get('quotes') ?? '').split(',').filter((q) => q in SHAPES);
    const from = url.searchParams.get('from') ?? latestDay;
    const to = url.searchParams.get('to') ?? latestDay;
    const days = weekdaysBetween(from, to < latestDay ? to : latestDay);
    let rows: FrankfurterRow[] = days.flatMap((date) => quotes.map((quote) => ({ date, quote, rate: frankfurterRate(quote, date) })));
    rows = corruptFrankfurterRows(rows, quotes, mode);
    return json(200, `[${rows.map((r) => `{"date":"${r.date}","base":"EUR","quote":"${r.quote}","rate":${r.rate}}`).join(',')}]`);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://upstream.test');
    requests.push(url);
    counts.set(url.pathname, (counts.get(url.pathname) ?? 0) + 1);
    const upstream: UpstreamName | undefined = url.pathname.startsWith(`${ECB_PREFIX}/`)
      ? 'ecb'
      : url.pathname.startsWith(`${FRANKFURTER_PREFIX}/`)
        ? 'frankfurter'
        : undefined;
    if (!upstream) {
      res.writeHead(404).end();
      return;
    }
    const { mode, delayMs } = state[upstream];
    const answer = () => {
      if (mode === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (mode === 'http500') {
        res.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>Internal Server Error</body></html>');
        return;
      }
      if (upstream === 'ecb') ecbAnswer(url.pathname.slice(ECB_PREFIX.length), res);
      else frankfurterAnswer(url, url.pathname.slice(FRANKFURTER_PREFIX.length), res);
    };
    if (delayMs > 0) {
      const timer = setTimeout(() => {
        delays.delete(timer);
        answer();
      }, delayMs);
      delays.add(timer);
    } else {
      answer();
    }
  }

  async function openListener(port: number): Promise<Listener> {
    // No keep-alive: a pooled connection would outlive a closed listener, and "refused" must be real.
    const server = createServer((req, res) => {
      res.shouldKeepAlive = false;
      handle(req, res);
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    const bound = await listenOnLoopback(server, port);
    return { server, port: bound, open: true, sockets };
  }

  function closeListener(listener: Listener): Promise<void> {
    if (!listener.open) return Promise.resolve();
    listener.open = false;
    return new Promise((resolve) => {
      listener.server.close(() => resolve());
      // Pooled keep-alive sockets would otherwise keep the upstream reachable.
      listener.server.closeAllConnections();
      for (const socket of listener.sockets) socket.destroy();
    });
  }

  const listeners: Record<UpstreamName, Listener> = {
    ecb: await openListener(0),
    frankfurter: await openListener(0),
  };

  async function setMode(name: UpstreamName, mode: UpstreamMode): Promise<void> {
    state[name].mode = mode;
    const listener = listeners[name];
    if (mode === 'refused') {
      await closeListener(listener);
    } else if (!listener.open) {
      listeners[name] = await openListener(listener.port);
    }
  }

  const callsUnder = (prefix: string) => (path?: string) =>
    path === undefined
      ? [...counts].filter(([p]) => p.startsWith(`${prefix}/`)).reduce((n, [, c]) => n + c, 0)
      : (counts.get(`${prefix}${path}`) ?? 0);

  const ecb: EcbUpstream = {
    name: 'ecb',
    url: `http://127.0.0.1:${listeners.ecb.port}${ECB_PREFIX}`,
    get mode() {
      return state.ecb.mode;
    },
    setMode: (mode) => setMode('ecb', mode),
    get delayMs() {
      return state.ecb.delayMs;
    },
    set delayMs(ms: number) {
      state.ecb.delayMs = ms;
    },
    get historyThrough() {
      return state.ecb.historyThrough;
    },
    set historyThrough(day: string) {
      state.ecb.historyThrough = day;
    },
    calls: callsUnder(ECB_PREFIX),
  };

  const frankfurter: FrankfurterUpstream = {
    name: 'frankfurter',
    url: `http://127.0.0.1:${listeners.frankfurter.port}${FRANKFURTER_PREFIX}`,
    get mode() {
      return state.frankfurter.mode;
    },
    setMode: (mode) => setMode('frankfurter', mode),
    get delayMs() {
      return state.frankfurter.delayMs;
    },
    set delayMs(ms: number) {
      state.frankfurter.delayMs = ms;
    },
    get latestDay() {
      return state.frankfurter.latestDay;
    },
    set latestDay(day: string) {
      state.frankfurter.latestDay = day;
    },
    calls: callsUnder(FRANKFURTER_PREFIX),
  };

  function releaseHanging(): void {
    for (const timer of delays) clearTimeout(timer);
    delays.clear();
    for (const res of hanging) res.destroy();
    hanging.clear();
  }

  return {
    ecb,
    frankfurter,
    requests,
    calls: (path) => counts.get(path) ?? 0,
    totalCalls: () => [...counts.values()].reduce((a, b) => a + b, 0),
    async reset() {
      releaseHanging();
      await setMode('ecb', 'ok');
      await setMode('frankfurter', 'ok');
      state.ecb.delayMs = 0;
      state.frankfurter.delayMs = 0;
      state.ecb.historyThrough = ECB_HISTORY_THROUGH;
      state.frankfurter.latestDay = FRANKFURTER_LATEST;
      requests.length = 0;
      counts.clear();
    },
    env: () => ({ EXRATES_ECB_URL: ecb.url, EXRATES_FRANKFURTER_URL: frankfurter.url }),
    async close() {
      releaseHanging();
      await Promise.all([closeListener(listeners.ecb), closeListener(listeners.frankfurter)]);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A one-off upstream

export interface LoopbackServer {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  origin: string;
  port: number;
  /** Stops listening and drops keep-alive sockets and requests the handler deliberately never answers. */
  close(): Promise<void>;
}

/** An HTTP server on a free loopback port, answering with `handler`: a provider's upstream as one test needs it. */
export async function serveOnLoopback(handler: RequestListener): Promise<LoopbackServer> {
  const server = createServer(handler);
  const port = await listenOnLoopback(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
