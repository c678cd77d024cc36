import Type from 'typebox';
import { ERROR_CODES } from '../core/errors.js';
import { GROUPS, rangesFor } from '../core/history.js';
import { keepsDeepHistory, retainedYearsText, type HistoryYears } from '../core/retention.js';
import { AMOUNT_PATTERN } from '../core/rates.js';
import { PROVIDER_KINDS } from '../providers/registry.js';

/** Query parameter names and the problem code their invalid values produce. */
export const PARAM_CODES = {
  from: 'invalid_currency',
  to: 'invalid_currency',
  amount: 'invalid_amount',
  range: 'invalid_range',
  format: 'invalid_format',
  date: 'invalid_date',
  source: 'unsupported_source',
  expand: 'invalid_format',
  start: 'invalid_date',
  end: 'invalid_date',
  group: 'invalid_range',
} as const;

/**
 * One of a fixed set of strings: a plain `enum` of type string, which generated clients type as the
 * union of its values (a union of one-value schemas would be `anyOf`, and one bad value a violation per branch).
 */
const Choice = <Values extends string[]>(values: readonly [...Values], options: { description?: string } = {}) =>
  Type.Enum(values, { type: 'string', ...options });

/** The shape of a currency parameter (case-insensitive); ISO 4217 decides the rest. */
export const CURRENCY_PATTERN = '^[A-Za-z]{3}$';

const Currency = (description: string) =>
  Type.String({
    pattern: CURRENCY_PATTERN,
    description: `${description} ISO 4217 alphabetic code, case-insensitive (answers use upper case).`,
    examples: ['EUR'],
  });

const DecimalString = (description: string, example: string) => Type.String({ description, pattern: '^[0-9]+(\\.[0-9]+)?$', examples: [example] });
const DateTime = Type.String({
  format: 'date-time',
  description:
    'When the provider says the rate applies (ECB: the reference date at 16:00 Frankfurt time; date-only providers: 00:00 UTC of the date), in UTC. Never the time of fetching.',
});
const Stale = Type.Boolean({
  description:
    "true when the latest refresh of the rate's provider failed and the last stored rate is served instead; false again after the next successful refresh.",
});

/** A past date: the answer is that day's history point; its shape here, the calendar and "not after today" in src/core. */
const DateParam = Type.Optional(
  Type.String({
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description:
      'A calendar date, YYYY-MM-DD, not after today (UTC). The answer is the rate of the latest day on or before it on which both currencies have a published rate (the same value as that day\'s point in /history), with that day\'s fixing time as asOf and stale false. Before the oldest stored day for the pair: 404 no_history. Without it, the live rate.',
    // No example: the docs page's "try it" would fill it in, and ask for a past rate by default.
  }),
);

const Amount = (description: string) =>
  Type.String({
    pattern: AMOUNT_PATTERN,
    description: `${description}: up to 18 integer digits and up to 12 decimals with "." as the decimal point. No sign, exponent, spaces or separators.`,
    examples: ['100', '99.95'],
  });

/** One provider's numbers only: `source` on /rate, /convert, /rates and /history. */
export const SOURCE_PATTERN = '^[A-Za-z0-9_-]{1,32}$';
const SourceParam = Type.Optional(
  Type.String({
    pattern: SOURCE_PATTERN,
    description:
      'A configured provider id (as /providers lists it; case-insensitive). The answer then uses only that provider\'s published numbers: both currencies through its base, on its days, never another provider\'s. `peg` stands for the legal parities (`peg-eur`, `peg-usd`…): the one that fixes both currencies answers, exactly (EUR→XOF 655.957, USD→AED 3.6725); a pair fixed against two different anchors is 400 unsupported_currency. A provider that is not configured: 400 unsupported_source; a currency it does not quote (now, for a live answer): 400 unsupported_currency naming it. Without it, each currency comes from its own central bank where one is configured, otherwise from the first provider, in order of preference, that quotes it.',
  }),
);

/** `expand=provenance` on /rate, /convert and /rates: the answer says what it was computed from. */
const ExpandParam = Type.Optional(
  Type.Literal('provenance', {
    description:
      'provenance: the answer (each entry, on /rates) adds a `provenance` object: the provider(s), the day, the bridge currency of a cross and every published number the rate was computed from. Without it, the answer is unchanged.',
  }),
);

export const RateQuery = Type.Object({
  from: Currency('Source currency.'),
  to: Currency('Target currency.'),
  date: DateParam,
  source: SourceParam,
  expand: ExpandParam,
});

export const ConvertQuery = Type.Object({
  from: Currency('Source currency.'),
  to: Currency('Target currency.'),
  amount: Amount('Non-negative decimal amount in the source currency'),
  date: DateParam,
  source: SourceParam,
  expand: ExpandParam,
});

export const RatesQuery = Type.Object({
  from: Currency('Source currency.'),
  to: Type.Optional(
    Type.String({
      description:
        'Target currencies: ISO 4217 codes separated by commas, case-insensitive, at most 200, none twice. Without it, every currency /currencies lists as answerable now (onRequest false) except from.',
      examples: ['USD,GBP,JPY'],
    }),
  ),
  date: DateParam,
  amount: Type.Optional(Amount('An amount in the source currency to convert into every target, as in /convert')),
  source: SourceParam,
  expand: ExpandParam,
});

/** Endpoints without parameters: any query is ignored, as unknown parameters are everywhere. */
export const NoQuery = Type.Object({});

/** A day /history starts or ends on: its shape here, the calendar, today and the retained years in src/core. */
const HistoryDay = (description: string) => Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description }));

/** /history's query: its ranges and the oldest `start` follow EXRATES_HISTORY_YEARS. */
export const historyQuery = (years: HistoryYears) =>
  Type.Object({
    from: Currency('Source currency.'),
    to: Currency('Target currency.'),
    range: Type.Optional(
      Choice(rangesFor(years), {
        description: `How far back from today (UTC) the history reaches, in calendar months or years${keepsDeepHistory(years) ? '; max: every day kept' : ''}; 1y when neither range nor start is given. Not with start.`,
      }),
    ),
    start: HistoryDay(
      `Instead of range: the first day, YYYY-MM-DD, within ${retainedYearsText(years)} and not after end. Days before the oldest stored day for the pair give the points that exist.`,
    ),
    end: HistoryDay('With start: the last day, YYYY-MM-DD, not after today (UTC); default today.'),
    group: Type.Optional(
      Choice(GROUPS, {
        description:
          'One point per ISO week (dated its Monday) or calendar month (dated its first day): the exact mean of its daily points, rounded once to 8 significant digits, with the number of days it averages. A period the range cuts averages the days inside it. Statistics run over these points.',
      }),
    ),
    format: Type.Optional(
      Choice(['json', 'csv', 'ndjson'], {
        description:
          'Default json (a History object). csv and ndjson answer what /api/v1/history.csv and /api/v1/history.ndjson answer, which describe them. Without it, the Accept header chooses among application/json, application/x-ndjson and text/csv (json when it ranks them equally or is absent); one that admits none of them is 406 not_acceptable.',
      }),
    ),
    source: SourceParam,
  });

/** The query of /history in one text format (/history.csv, /history.ndjson): the same but format. */
export const historyTextQuery = (years: HistoryYears) => Type.Omit(historyQuery(years), ['format']);

/** What a history request names, whichever of the history routes it came to. */
export type HistoryParams = Type.Static<ReturnType<typeof historyTextQuery>>;

/**
 * The validators a client may send for a conditional GET (RFC 9110 §13.1): declared so that typed
 * clients can send them. A 304 answers a match.
 */
export const CONDITIONAL_HEADERS = Type.Object({
  'If-None-Match': Type.Optional(Type.String({ description: 'ETags the client holds; a match (weak comparison, or *) gets a 304.' })),
  'If-Modified-Since': Type.Optional(
    Type.String({ description: 'An HTTP date; when no If-None-Match is sent, a Last-Modified at or before it gets a 304.' }),
  ),
});

export const PublishedNumberSchema = Type.Object(
  {
    provider: Type.String({ description: 'The provider that published it.', examples: ['cnb'] }),
    day: Type.String({ format: 'date', description: 'The day it was published for.' }),
    base: Type.String({ description: "The provider's base currency.", examples: ['CZK'] }),
    currency: Type.String({ description: 'The currency it is the rate of.', examples: ['USD'] }),
    rate: Type.String({
      description:
        'Units of `currency` per one `base`, exactly as stored: a decimal as published, or `1/<x>`, the exact reciprocal of the number x the provider published (see reciprocalOf).',
      examples: ['1.19', '1/20.541'],
    }),
    reciprocalOf: Type.Optional(
      Type.String({ description: 'For a `1/<x>` rate: x exactly as published, units of `base` per one `currency` (a per-10/100/1,000 quotation already divided out).', examples: ['20.541'] }),
    ),
    revisions: Type.Optional(
      Type.Array(
        Type.Object({
          rate: Type.String({ description: 'The earlier number, as it was served.' }),
          asOf: Type.String({ format: 'date-time', description: 'When the provider said the earlier number applied.' }),
          replacedAt: Type.String({ format: 'date-time', description: 'When a later document of the provider replaced it.' }),
        }),
        { description: 'Present only for a corrected number: the earlier numbers of the same day that later documents replaced, oldest first.' },
      ),
    ),
  },
  { $id: 'PublishedNumber', description: 'One number a provider published.' },
);

export const ReplacedCurrencySchema = Type.Object(
  {
    currency: Type.String({ description: 'The replaced currency.', examples: ['BGN'] }),
    successor: Type.String({ description: 'The currency that replaced it.', examples: ['EUR'] }),
    ratio: Type.String({ description: 'Units of `currency` per one `successor`, fixed by law, exact.', examples: ['1.95583'] }),
    from: Type.String({ format: 'date', description: 'The day from which the successor is the currency.', examples: ['2026-01-01'] }),
    reference: Type.String({ description: 'The legal act or central bank notice that fixes the ratio.' }),
  },
  { $id: 'ReplacedCurrency', description: 'A currency replaced by another at a ratio fixed by law (a euro changeover, a redenomination).' },
);

export const ProvenanceSchema = Type.Object(
  {
    providers: Type.Array(Type.String(), { description: "The provider of `from`'s number, then, when different, that of `to`'s.", examples: [['ecb']] }),
    day: Type.String({ format: 'date', description: 'The day of every number used (a cross uses one day for all).' }),
    bridge: Type.Union([Type.String(), Type.Null()], {
      description: 'The currency both providers publish through which a cross between two providers is taken; null for one provider.',
    }),
    numbers: Type.Array(Type.Unsafe(ref('PublishedNumber')), {
      description:
        "The published numbers used, in the order from, bridge in from's provider, bridge in to's provider, to. A provider's base counts 1 and is not listed. One provider: rate = to / from; a cross: rate = (bridge_from / from) × (to / bridge_to); then rounded once to 8 significant digits, half-to-even.",
    }),
    setAside: Type.Optional(
      Type.Array(Type.Unsafe(ref('SetAsideNumber')), {
        description:
          "Present only when a provider preferred for `from` or `to` was passed over because the cross-check set its number of that day aside (it differs from the median of at least three other providers that agree with each other): those numbers, and why.",
      }),
    ),
    replaced: Type.Optional(
      Type.Array(Type.Unsafe(ref('ReplacedCurrency')), {
        description:
          'Present only when `from` or `to` had been replaced by then at a legal fixed ratio: the numbers are those of its successor, and the rate is theirs multiplied by to\'s ratio over from\'s (for example EUR→BGN from 2026-01-01 is exactly 1.95583), then rounded once. Before that day the replaced currency\'s market numbers are served, as published.',
      }),
    ),
    flagged: Type.Optional(
      Type.Array(Type.Unsafe(ref('SetAsideNumber')), {
        description:
          'Present only when a number used here differs from the median of the other providers that quote its currency by more than EXRATES_CROSSCHECK_PERCENT, but fewer than three of them agree with each other, so it is still served: those numbers, and why.',
      }),
    ),
  },
  { $id: 'Provenance', description: 'Where a rate comes from: enough to recompute it by hand from the providers\' own pages.' },
);
const ProvenanceField = Type.Optional(Type.Unsafe<unknown>({ ...ref('Provenance'), description: 'With expand=provenance: what the rate was computed from.' }));

const RATE_NOTE =
  'Decimal string: the exact cross rate rounded once, half-to-even, to 8 significant digits, trailing zeros removed. "1" when from equals to.';

export const RateResponse = Type.Object(
  {
    pair: Type.String({ description: 'Source code immediately followed by target code.', examples: ['EURUSD'] }),
    from: Type.String({ description: 'ISO 4217 source currency.' }),
    to: Type.String({ description: 'ISO 4217 target currency.' }),
    rate: DecimalString(RATE_NOTE, '1.0842'),
    asOf: DateTime,
    stale: Stale,
    provenance: ProvenanceField,
  },
  { $id: 'Rate', description: 'Live mid-market rate: units of `to` per one unit of `from`.' },
);

export const ConversionResponse = Type.Object(
  {
    from: Type.String({ description: 'ISO 4217 source currency.' }),
    to: Type.String({ description: 'ISO 4217 target currency.' }),
    amount: DecimalString('The input amount with leading zeros removed.', '100'),
    rate: DecimalString(`The rate used. ${RATE_NOTE}`, '1.0842'),
    result: DecimalString(
      "amount × rate (the rate as returned here), rounded half-to-even to the target currency's ISO 4217 minor units and written with exactly that many decimals (USD 2, JPY 0, KWD 3; 8 for currencies without minor units such as XAU).",
      '108.42',
    ),
    asOf: DateTime,
    stale: Stale,
    provenance: ProvenanceField,
  },
  { $id: 'Conversion', description: 'A conversion at the live mid-market rate.' },
);

export const HistoryResponse = Type.Object(
  {
    pair: Type.String({ examples: ['EURUSD'] }),
    range: Type.String({
      description: 'What was served: the range (1m, 3m, 6m, 1y, 5y, and 10y or max where more than five years are kept), or `<start>/<end>` for dates asked for, end being today when not given.',
      examples: ['1y', '2025-01-01/2025-06-30'],
    }),
    group: Type.Optional(Choice(GROUPS, { description: 'Present when the points are averages per week or month.' })),
    count: Type.Integer({ description: 'Number of points.' }),
    points: Type.Array(
      Type.Object({
        date: Type.String({
          format: 'date',
          description: 'A date on which both currencies have a published rate; grouped, the Monday of the ISO week or the first day of the month.',
        }),
        rate: DecimalString('Daily reference rate, 8 significant digits, half-to-even; grouped, the exact mean of the period\'s daily points rounded once the same way.', '1.0842'),
        days: Type.Optional(Type.Integer({ minimum: 1, description: 'Grouped only: how many daily points the rate averages (fewer where the range cuts the period).' })),
      }),
      { description: 'Ascending by date: daily closes (no synthetic weekend or holiday points), or one point per period when grouped.' },
    ),
    stats: Type.Object(
      {
        best: DecimalString('Highest point rate in the range (most `to` per `from`).', '1.1'),
        bestDate: Type.String({ format: 'date', description: 'Date of best; on ties the most recent.' }),
        worst: DecimalString('Lowest point rate in the range.', '1.0'),
        worstDate: Type.String({ format: 'date', description: 'Date of worst; on ties the most recent.' }),
        average: DecimalString('Exact arithmetic mean of the point rates, rounded half-to-even to 8 significant digits.', '1.05'),
        changePct: Type.Number({ description: '(last − first) / first × 100, rounded half-to-even to 4 decimals; 0 for a single point.' }),
        currentVsAveragePct: Type.Number({ description: '(last − exact mean) / exact mean × 100, rounded half-to-even to 4 decimals.' }),
      },
      { description: 'Statistics computed from the points exactly as served, so a client can reproduce them.' },
    ),
  },
  { $id: 'History', description: 'Daily history with statistics.' },
);

export const CurrencyEntry = Type.Object(
  {
    code: Type.String({ description: 'ISO 4217 alphabetic code.', examples: ['AUD'] }),
    name: Type.String({ description: 'ISO 4217 currency name.', examples: ['Australian Dollar'] }),
    minorUnits: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'ISO 4217 minor units (the decimals of a conversion result); null where ISO 4217 has none (XAU and the like: results use 8 decimals).',
    }),
    servedBy: Type.Union([Type.String(), Type.Null()], {
      description:
        'The provider whose published numbers /rate uses for it: the first of providers whose newest number the cross-check did not set aside, unless source names another or the other currency of a pair is quoted by a provider that also quotes this one (a pair one provider quotes whole is served by it alone). null for a currency on request, until it is loaded.',
      examples: ['ecb'],
    }),
    providers: Type.Array(Type.String(), {
      description:
        "Providers that quote it now (each one a valid source for it), in the order they serve it: its own central bank (a configured bank whose base it is) first, then the order of /providers; for a currency on request, those that may load it.",
      examples: [['ecb']],
    }),
    firstDate: Type.Optional(Type.String({ format: 'date', description: 'Oldest stored day with a rate for it: dates before this are no_history.' })),
    lastDate: Type.Optional(Type.String({ format: 'date', description: 'Newest stored day with a rate for it.' })),
    onRequest: Type.Boolean({
      description: 'false: answered now. true: nothing stored yet; the first request that names it loads its history (and takes longer), or answers unsupported_currency when no provider quotes it after all.',
    }),
    replacedBy: Type.Optional(
      Type.Object(
        {
          successor: Type.String({ description: 'The currency that replaced it.', examples: ['EUR'] }),
          ratio: DecimalString('Units of the replaced currency per one unit of its successor, exact as the law states it.', '1.95583'),
          from: Type.String({ format: 'date', description: 'The first day of its successor: from it on, its rates are its successor\'s at the ratio; before it, the market numbers as published.' }),
          reference: Type.String({ description: 'The legal act or central bank notice that fixes the ratio.' }),
        },
        { description: 'Present for a currency replaced by another at a fixed legal ratio (BGN by EUR at 1.95583 from 2026-01-01); servedBy, providers and lastDate are then its successor\'s.' },
      ),
    ),
  },
  { $id: 'Currency', description: 'A currency the service answers for.' },
);

export const CurrencyList = Type.Object(
  {
    currencies: Type.Array(Type.Unsafe(ref('Currency')), { description: 'Sorted by code; EUR included.' }),
  },
  { $id: 'CurrencyList', description: 'Every currency /rate answers now, then (onRequest true) those a provider can quote on first request.' },
);

export const RatesEntry = Type.Object({
  to: Type.String({ description: 'ISO 4217 target currency.' }),
  rate: DecimalString(RATE_NOTE, '0.8642'),
  asOf: DateTime,
  stale: Stale,
  result: Type.Optional(DecimalString('With amount: amount × rate, exactly as /convert answers it for this pair.', '86.42')),
  provenance: ProvenanceField,
}, { $id: 'RatesEntry', description: 'One target of a /rates answer.' });

export const RatesResponse = Type.Object(
  {
    from: Type.String({ description: 'ISO 4217 source currency.' }),
    amount: Type.Optional(DecimalString('With amount: the input amount with leading zeros removed.', '100')),
    rates: Type.Array(Type.Unsafe(ref('RatesEntry')), {
      description: 'Sorted by `to`. Each entry is what /rate (with amount: /convert) answers for its pair at that moment. On a date without `to`, currencies without a rate on or before it are left out.',
    }),
  },
  { $id: 'Rates', description: 'One rate (or amount) in many currencies.' },
);

export const UsageResponse = Type.Object(
  {
    tier: Choice(['free', 'pro'], { description: "The key's tier." }),
    limit: Type.Integer({ description: 'Requests per UTC day (X-RateLimit-Limit).' }),
    used: Type.Integer({ description: 'Requests counted today.' }),
    remaining: Type.Integer({ description: 'Requests left today (X-RateLimit-Remaining).' }),
    resetsAt: Type.String({ format: 'date-time', description: 'The next reset, 00:00 UTC (X-RateLimit-Reset in Unix seconds).' }),
  },
  { $id: 'Usage', description: "The calling key's quota today. Reading it does not count." },
);

const outlierFields = {
  currency: Type.String({ examples: ['USD'] }),
  day: Type.String({ format: 'date' }),
  base: Type.String({ description: "The provider's base: both numbers are units of currency per one base.", examples: ['PLN'] }),
  rate: Type.String({ description: 'Its number as stored: a decimal, or `1/<x>` for a number x published the other way round.', examples: ['1/3712.3'] }),
  median: Type.String({
    description: "The median of the other providers' numbers, each the exact cross through base on that day, to 8 significant digits.",
    examples: ['0.26937905'],
  }),
  others: Type.Array(Type.String(), { description: 'The other providers it was compared with.' }),
  agreeing: Type.Integer({ description: 'How many of them lie within EXRATES_CROSSCHECK_PERCENT of their median.' }),
};

export const CrossCheckOutlier = Type.Object(
  {
    ...outlierFields,
    setAside: Type.Boolean({ description: 'true when at least three others agree: the number is not served without `source`, the next provider\'s is.' }),
  },
  { $id: 'CrossCheckOutlier', description: "A provider's number that differs from the median of the other providers' numbers by more than EXRATES_CROSSCHECK_PERCENT." },
);

export const SetAsideNumber = Type.Object(
  {
    provider: Type.String({ examples: ['nbp'] }),
    ...outlierFields,
    reason: Type.String({ description: 'Why, in one sentence.' }),
  },
  { $id: 'SetAsideNumber', description: "A number the cross-check flagged: in `setAside`, a preferred provider's, passed over for the next provider's; in `flagged`, one used all the same." },
);

export const CheckedNumber = Type.Object(
  {
    currency: Type.String(),
    day: Type.String({ format: 'date' }),
    asOf: Type.String({ format: 'date-time' }),
    rate: Type.String({ description: 'The number as published.' }),
    previous: Type.String({ description: "What it was compared with: the stored number of that day (a correction) or the provider's previous number (a move)." }),
    kind: Choice(['correction', 'move']),
    reason: Type.String({ description: 'Why, in words.' }),
    notedAt: Type.String({ format: 'date-time', description: 'When the refresh that decided it ran.' }),
  },
  { $id: 'CheckedNumber', description: 'A published number that a refresh held or flagged.' },
);

export const ProviderEntry = Type.Object(
  {
    id: Type.String({ description: 'The provider, as EXRATES_PROVIDERS names it.', examples: ['ecb'] }),
    name: Type.String({ description: 'The publisher\'s own name.', examples: ['European Central Bank'] }),
    kind: Choice(PROVIDER_KINDS, { description: 'central bank (an official source publishing its own reference rates), peg (the parities fixed by law or treaty against its base, one provider per anchor currency: `peg-eur`, `peg-usd`…; `source=peg` takes whichever quotes both currencies of a pair), aggregator (a service that gathers others\' rates), commercial (a paid data vendor) or file (a document the operator supplies).' }),
    base: Type.String({ description: 'The currency all of its rates are quoted against.', examples: ['EUR'] }),
    currencies: Type.Array(Type.String(), {
      description: 'The currencies it quotes now (its base included), sorted by code.',
      examples: [['EUR', 'USD']],
    }),
    latestDay: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'Its newest stored day; null before its first refresh.' }),
    refresh: Type.Object(
      {
        lastSuccessAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When its latest successful refresh ended.' }),
        lastFailureAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When its latest failed refresh ended.' }),
        failing: Type.Boolean({ description: 'true when its latest refresh failed: its rates are then served with stale: true.' }),
      },
      { description: 'The outcome of its refreshes.' },
    ),
    termsUrl: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: "The publisher's terms of use for its rates; null when it publishes none (or the operator supplies the data).",
    }),
    schedule: Type.String({ description: 'When it publishes, in words.', examples: ['TARGET business days, around 16:00 CET'] }),
    crossCheck: Type.Object(
      {
        state: Choice(['agrees', 'disagrees', 'unchecked'], {
          description:
            'agrees: each of its stored numbers that another provider also quotes lies within EXRATES_CROSSCHECK_PERCENT of the others\' median; disagrees: at least one does not (see outliers); unchecked: no other provider quotes any of its currencies on the same days (or within four days before).',
        }),
        outliers: Type.Array(Type.Unsafe(ref('CrossCheckOutlier')), { description: 'Its numbers that differ from the others\' median, newest day first.' }),
      },
      { description: 'How its numbers compare with the other providers\' numbers for the same currencies and days.' },
    ),
    revisions: Type.Array(
      Type.Object({
        currency: Type.String(),
        day: Type.String({ format: 'date' }),
        rate: Type.String({ description: 'The earlier number, as it was served.' }),
        asOf: Type.String({ format: 'date-time' }),
        replacedAt: Type.String({ format: 'date-time', description: 'When a later document replaced it.' }),
        replacedBy: Type.String({ description: 'The number that replaced it.' }),
      }),
      { description: 'Corrections: published numbers that a later document of the provider changed, newest first (at most 20).' },
    ),
    held: Type.Array(Type.Unsafe(ref('CheckedNumber')), {
      description:
        'Numbers not served: a correction by a factor of 5 or more, or beyond EXRATES_CROSSCHECK_PERCENT from the other providers, or a day-over-day move by a factor of 5 or more. Each is served once another provider or the provider\'s next publication confirms it. Newest day first.',
    }),
    flagged: Type.Array(Type.Unsafe(ref('CheckedNumber')), {
      description: 'Numbers served but worth a look: a day-over-day move by more than 25 %, or a held number released once confirmed. Newest day first.',
    }),
  },
  { $id: 'Provider', description: 'A configured rate provider.' },
);

export const ProviderList = Type.Object(
  {
    providers: Type.Array(Type.Unsafe(ref('Provider')), { description: 'In order of preference: a currency is served by its own central bank (the provider of kind central bank whose base it is) where one is configured, otherwise by the first that quotes it.' }),
  },
  { $id: 'ProviderList', description: 'The configured rate providers.' },
);

export const ProblemResponse = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem: /problems/<code>.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Choice(ERROR_CODES, { description: 'Stable machine-readable code.' }),
    param: Type.Optional(Type.String({ description: 'The offending query parameter, on validation errors.' })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' },
);

/** A reference to one of SHARED_SCHEMAS, as the OpenAPI document names it in components.schemas. */
export function ref(id: SharedSchemaId): { $ref: string } {
  return { $ref: `${id}#` };
}

/** Sent with every answer to a valid key on the keyed endpoints (SPEC §6). */
export const QUOTA_HEADERS = {
  'X-RateLimit-Limit': { type: 'integer', description: "The key's requests per UTC day." },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left today.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix seconds of the next reset (00:00 UTC).' },
  'RateLimit-Policy': {
    type: 'string',
    description:
      'The quota policy (draft-ietf-httpapi-ratelimit-headers, a Structured Field List): `"daily";q=<requests per UTC day>;w=86400`, the same limit as X-RateLimit-Limit.',
  },
  RateLimit: {
    type: 'string',
    description:
      'What remains of that policy (draft-ietf-httpapi-ratelimit-headers): `"daily";r=<requests left today>;t=<seconds until the reset at 00:00 UTC>`, the same reading as X-RateLimit-Remaining and X-RateLimit-Reset; on a 429, t equals Retry-After.',
  },
};
const RETRY_AFTER = { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' } };

/** How every problem may be cached (src/http/headers.ts): never stored, varying on the key headers. */
const PROBLEM_CACHE_HEADERS = {
  'Cache-Control': { type: 'string', description: 'no-store: an error is never stored by any cache.' },
  Vary: { type: 'string', description: 'X-Api-Key, Authorization: the answer depends on the key.' },
};

function problem(description: string, headers: Record<string, { type: string; description: string }> = QUOTA_HEADERS) {
  return { description, headers: { ...headers, ...PROBLEM_CACHE_HEADERS }, content: { 'application/problem+json': { schema: ref('Problem') } } };
}

/** Error responses shared by every keyed endpoint. */
export const KEYED_ERRORS = {
  401: problem('`unauthorized`: missing, malformed, unknown or revoked API key.', {
    'WWW-Authenticate': { type: 'string', description: 'ApiKey realm="exrates", header="X-Api-Key", query="apikey".' },
  }),
  413: problem('`payload_too_large`: a body announced longer than 1 KiB (the API reads none), refused from Content-Length before it is read; counted; the connection closes.'),
  429: problem('`quota_exceeded`: the daily quota is used up; see Retry-After and X-RateLimit-Reset. Not counted.', { ...QUOTA_HEADERS, ...RETRY_AFTER }),
  503: problem('`feed_unavailable` (nothing is stored and the upstream feed cannot be reached) or `service_unavailable` (the database or Redis cannot be reached); see Retry-After.', {
    ...QUOTA_HEADERS,
    ...RETRY_AFTER,
  }),
};

/** The 406 of a route whose answer depends on the Accept header (QUOTA_HEADERS: it counts). */
export const NOT_ACCEPTABLE = {
  406: problem('`not_acceptable`: the Accept header admits none of the media types this endpoint sends (without `Accept`, or with `*/*` or `application/*`, JSON). Counted.'),
};

export function badRequest(codes: string) {
  return problem(`Invalid input: ${codes}. \`param\` names the offending parameter. A required parameter given twice is also a 400. A request that cannot be taken as sent (two Host headers, a body that cannot be delimited) is a 400 \`malformed_request\`, with no \`param\`.`);
}

export function notFoundProblem(description: string) {
  return problem(description);
}

/**
 * The answers' shapes, named once: Fastify holds them (app.addSchema), routes refer to them, and
 * the OpenAPI document lists them under components.schemas by these names, so generated clients
 * get one type per shape.
 */
export const SHARED_SCHEMAS = [
  PublishedNumberSchema,
  ProvenanceSchema,
  ReplacedCurrencySchema,
  SetAsideNumber,
  CrossCheckOutlier,
  CurrencyEntry,
  RatesEntry,
  CheckedNumber,
  ProviderEntry,
  RateResponse,
  ConversionResponse,
  HistoryResponse,
  CurrencyList,
  RatesResponse,
  ProviderList,
  UsageResponse,
  ProblemResponse,
];
export type SharedSchemaId =
  | 'Rate'
  | 'Conversion'
  | 'History'
  | 'Problem'
  | 'CurrencyList'
  | 'Rates'
  | 'Usage'
  | 'Currency'
  | 'RatesEntry'
  | 'Provider'
  | 'ProviderList'
  | 'PublishedNumber'
  | 'Provenance'
  | 'ReplacedCurrency'
  | 'SetAsideNumber'
  | 'CrossCheckOutlier'
  | 'CheckedNumber';
