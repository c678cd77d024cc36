/**
 * A worker thread's entry (off-thread.ts): parses one document and posts the document, or why it
 * could not be read, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FeedError } from '../core/errors.js';
import type { RateDocument } from '../core/ports.js';
import { parseBnmRates } from './bnm.js';
import { parseBnrXml } from './bnr.js';
import { parseBcraRates } from './bcra.js';
import { parseBocObservations } from './boc.js';
import { parseBoeCsv } from './boe.js';
import { parseBoiCsv } from './boi.js';
import { parseCbaLatest, parseCbaRange } from './cba.js';
import { parseCbnRates } from './cbn.js';
import { parseCbrDaily, parseCbrDynamic } from './cbr.js';
import { parseCbuRates } from './cbu.js';
import { parseCnbRates } from './cnb.js';
import { parseDnbCsv } from './dnb.js';
import { parseEcbDocument } from './ecb-format.js';
import { parseFrankfurterRates } from './frankfurter.js';
import { parseMnbResponse } from './mnb.js';
import { parseNbgRates } from './nbg.js';
import { parseNbkRates } from './nbk.js';
import { parseNbpTables } from './nbp.js';
import { parseNbrmRates } from './nbrm.js';
import { parseNbrbDynamics, parseNbrbRates } from './nbrb.js';
import { parseNbtRates } from './nbt.js';
import { parseNbuRates } from './nbu.js';
import { parseNorgesBankCsv } from './norgesbank.js';
import type { ParseAnswer, ParserName } from './off-thread.js';
import { parseRbaCsv } from './rba.js';
import { parseRiksbankObservations } from './riksbank.js';
import { parseSarbSeries } from './sarb.js';

/** Each parser by the name an adapter gives parseOffThread with it. */
const PARSERS = {
  ecb: parseEcbDocument,
  bnm: parseBnmRates,
  bnr: parseBnrXml,
  bcra: parseBcraRates,
  boc: parseBocObservations,
  boe: parseBoeCsv,
  boi: parseBoiCsv,
  cbaLatest: parseCbaLatest,
  cbaRange: parseCbaRange,
  cbn: parseCbnRates,
  cbr: parseCbrDaily,
  cbrDynamic: parseCbrDynamic,
  cbu: parseCbuRates,
  cnb: parseCnbRates,
  dnb: parseDnbCsv,
  frankfurter: parseFrankfurterRates,
  mnb: parseMnbResponse,
  nbg: parseNbgRates,
  nbk: parseNbkRates,
  nbp: parseNbpTables,
  nbrm: parseNbrmRates,
  nbrb: parseNbrbRates,
  nbrbDynamics: parseNbrbDynamics,
  nbt: parseNbtRates,
  nbu: parseNbuRates,
  norgesbank: parseNorgesBankCsv,
  rba: parseRbaCsv,
  riksbank: parseRiksbankObservations,
  sarb: parseSarbSeries,
} satisfies Record<ParserName, (...args: never[]) => RateDocument>;

const { name, input } = workerData as { name: ParserName; input: unknown[] };
let answer: ParseAnswer;
try {
  answer = { ok: true, document: (PARSERS[name] as (...args: unknown[]) => RateDocument)(...input) };
} catch (error) {
  answer = { ok: false, feed: error instanceof FeedError, message: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(answer);
