/**
 * What the stand-ins of the NBRB, the Bank of Russia, the CBU, the BCRA, the CBN, the CBA and the
 * NBT answer (for startBankServer): each bank's recorded documents at the paths, queries or SOAP
 * calls it documents, cut to the range asked by slicing the recorded bytes (no value rewritten);
 * a day the recordings do not hold answers as the bank does for a day without rates. Each
 * `…_TODAY` is the day the bank's recordings were made, the stand-in's "today".
 */
import { recordingsOf, type Recording, type Reply, type RequestContent } from './bank-server.js';

export type StandIn = (url: URL, request: RequestContent) => Reply | undefined;

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
/** `DD.MM.YYYY` → `YYYY-MM-DD`. */
export const dashed = (dotted: string): string => `${dotted.slice(6)}-${dotted.slice(3, 5)}-${dotted.slice(0, 2)}`;
/** The text of an element in a recorded XML or the literal of a field of a flat JSON object. */
export const field = (element: string, name: string): string => new RegExp(`<${name}>([^<]*)</${name}>`).exec(element)![1]!;
export const literal = (entry: string, name: string): string => new RegExp(`"${name}":("?)([^,"}]*)\\1`).exec(entry)![2]!;
/** Each entry of a recorded JSON array of flat objects, as its raw text. */
export const rawEntries = (text: string): string[] => text.match(/\{[^}]*\}/g) ?? [];
const byQuery = (recordings: Recording[], name: string): Map<string, Recording> =>
  new Map(recordings.map((r) => [new URL(r.pathAndQuery, 'http://x').searchParams.get(name)!, r]));

export const NBRB_TODAY = '2026-03-17';
export const nbrbRecordings = recordingsOf('nbrb');
/** The recorded `dynamics` answers by Cur_ID. */
export const nbrbDynamics = new Map(
  nbrbRecordings.filter((r) => r.pathAndQuery.startsWith('/exrates/rates/dynamics/')).map((r) => [/\/dynamics\/(\d+)\?/.exec(r.pathAndQuery)![1]!, r]),
);
export const nbrbStandIn: StandIn = (url) => {
  const q = url.searchParams;
  const table = nbrbRecordings[0]!;
  if (url.pathname === '/exrates/rates' && q.get('periodicity') === '0' && q.get('ondate') === NBRB_TODAY) return { body: table.body, contentType: table.contentType };
  const id = /^\/exrates\/rates\/dynamics\/(\d+)$/.exec(url.pathname)?.[1];
  const recorded = id === undefined ? undefined : nbrbDynamics.get(id);
  const from = q.get('startDate') ?? '';
  const to = q.get('endDate') ?? '';
  if (!recorded || !ISO_DAY.test(from) || !ISO_DAY.test(to)) return undefined;
  const kept = rawEntries(recorded.body.toString('utf8')).filter((entry) => literal(entry, 'Date').slice(0, 10) >= from && literal(entry, 'Date').slice(0, 10) <= to);
  return { body: `[${kept.join(',')}]`, contentType: recorded.contentType };
};

export const CBR_TODAY = '2026-04-26';
export const cbrRecordings = recordingsOf('cbr');
/** The recorded `XML_dynamic.asp` answers by the bank's currency ID. */
export const cbrDynamics = new Map([...byQuery(cbrRecordings.filter((r) => r.pathAndQuery.startsWith('/scripts/XML_dynamic.asp')), 'VAL_NM_RQ')]);
const SLASHED = /^(\d{2})\/(\d{2})\/(\d{4})$/;
export const cbrStandIn: StandIn = (url) => {
  const q = url.searchParams;
  const daily = cbrRecordings[0]!;
  if (url.pathname === '/scripts/XML_daily.asp' && q.get('date_req') === '26/04/2026') return { body: daily.body, contentType: daily.contentType };
  const recorded = url.pathname === '/scripts/XML_dynamic.asp' ? cbrDynamics.get(q.get('VAL_NM_RQ') ?? '') : undefined;
  const from = SLASHED.exec(q.get('date_req1') ?? '');
  const to = SLASHED.exec(q.get('date_req2') ?? '');
  if (!recorded || !from || !to) return undefined;
  // windows-1251 bytes kept as they are: latin1 maps each byte to one character and back.
  const text = recorded.body.toString('latin1');
  const within = (record: string) => {
    const day = dashed(/Date="([^"]+)"/.exec(record)![1]!);
    return day >= `${from[3]}-${from[2]}-${from[1]}` && day <= `${to[3]}-${to[2]}-${to[1]}`;
  };
  const body = text.replace(/<Record .*<\/Record>/, (all) => (all.match(/<Record .*?<\/Record>/g) ?? []).filter(within).join(''));
  return { body: Buffer.from(body, 'latin1'), contentType: recorded.contentType };
};

export const CBU_TODAY = '2026-04-03';
export const cbuRecordings = recordingsOf('cbu');
export const cbuByDay = new Map(cbuRecordings.map((r) => [/\/all\/(\d{4}-\d{2}-\d{2})\/$/.exec(r.pathAndQuery)![1]!, r]));
export const cbuStandIn: StandIn = (url) => {
  const day = /^\/en\/arkhiv-kursov-valyut\/json\/all\/(\d{4}-\d{2}-\d{2})\/$/.exec(url.pathname)?.[1];
  if (day === undefined || url.search !== '') return undefined;
  const recorded = cbuByDay.get(day);
  if (recorded) return { body: recorded.body, contentType: recorded.contentType };
  // After the recorded days the bank answers the rates still in force, dated the day they took effect.
  if (day > CBU_TODAY) return { body: cbuByDay.get(CBU_TODAY)!.body, contentType: 'application/json' };
  return { body: '[]', contentType: 'application/json' };
};

export const BCRA_TODAY = '2026-03-20';
export const bcraRecordings = recordingsOf('bcra');
export const bcraByDay = byQuery(bcraRecordings, 'fecha');
export const BCRA_EMPTY_DAY = '{"status":200,"results":{"fecha":null,"detalle":[]}}';
export const bcraStandIn: StandIn = (url) => {
  if (url.pathname !== '/estadisticascambiarias/v1.0/Cotizaciones') return undefined;
  const day = url.searchParams.get('fecha') ?? '';
  const recorded = bcraByDay.get(day);
  if (recorded) return { body: recorded.body, contentType: recorded.contentType };
  return ISO_DAY.test(day) ? { body: BCRA_EMPTY_DAY, contentType: 'application/json; charset=utf-8' } : { status: 400, body: '{"status":400}', contentType: 'application/json' };
};

export const CBN_TODAY = '2026-05-22';
export const cbnRecording = recordingsOf('cbn')[0]!;
export const cbnStandIn: StandIn = (url) => (`${url.pathname}${url.search}` === cbnRecording.pathAndQuery ? { body: cbnRecording.body, contentType: cbnRecording.contentType } : undefined);

export const CBA_TODAY = '2026-03-19';
export const [cbaLatest, cbaRange] = recordingsOf('cba') as [Recording, Recording];
export const CBA_ROWS = /<ExchangeRatesByRange [^>]*>.*?<\/ExchangeRatesByRange>/g;
const CBA_TABLE = /<DocumentElement xmlns="">.*<\/DocumentElement>/;
export const cbaStandIn: StandIn = (url, request) => {
  if (url.pathname !== '/exchangerates.asmx' || request.method !== 'POST' || !String(request.headers['soapaction']).startsWith('"http://www.cba.am/')) return undefined;
  if (request.body === cbaLatest.requestBody) return { body: cbaLatest.body, contentType: cbaLatest.contentType };
  const asked = /<ISOCodes>([A-Z,]+)<\/ISOCodes>\s*<DateFrom>([\d-]+)<\/DateFrom>\s*<DateTo>([\d-]+)<\/DateTo>/.exec(request.body);
  if (!asked) return undefined;
  const [, codes, from, to] = asked as unknown as [string, string, string, string];
  const text = cbaRange.body.toString('utf8');
  const rows = (text.match(CBA_ROWS) ?? []).filter((row) => {
    const day = field(row, 'RateDate').slice(0, 10);
    return day >= from && day <= to && codes.split(',').includes(field(row, 'ISO'));
  });
  // A range without rows has no table in the DataSet.
  return { body: text.replace(CBA_TABLE, rows.length === 0 ? '' : `<DocumentElement xmlns="">${rows.join('')}</DocumentElement>`), contentType: cbaRange.contentType };
};

export const NBT_TODAY = '2026-05-20';
export const nbtRecordings = recordingsOf('nbt');
export const nbtByDay = byQuery(nbtRecordings, 'date');
export const nbtEmptyDay = (day: string): string => `<?xml version="1.0" encoding="utf-8" ?>\n<ValCurs Date="${day}" name="Foreign Currency Market">\n</ValCurs>`;
export const nbtStandIn: StandIn = (url) => {
  const day = url.searchParams.get('date') ?? '';
  if (url.pathname !== '/en/kurs/export_xml.php' || url.searchParams.get('export') !== 'xmlout' || !ISO_DAY.test(day)) return undefined;
  const recorded = nbtByDay.get(day);
  return recorded ? { body: recorded.body, contentType: recorded.contentType } : { body: nbtEmptyDay(day), contentType: 'text/xml;charset=UTF-8' };
};
