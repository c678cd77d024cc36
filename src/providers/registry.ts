/**
 * Every rate provider the service can use, one entry each: how to make it, where it lives by
 * default, and what a person should know about it (who publishes, against which currency, on what
 * terms and when). The configuration (EXRATES_PROVIDERS, the EXRATES_<ID>_URL settings) and the
 * wiring (src/deps.ts) read this list; nothing else names the providers one by one.
 */
import { createBancaDItaliaProvider } from './bancaditalia.js';
import { BCRA_METADATA, createBcraProvider } from './bcra.js';
import { BNM_METADATA, createBnmProvider } from './bnm.js';
import { BNR_METADATA, createBnrProvider } from './bnr.js';
import { BOC_METADATA, createBocProvider } from './boc.js';
import { BOE_METADATA, createBoeProvider } from './boe.js';
import { BOI_METADATA, createBoiProvider } from './boi.js';
import { CBA_METADATA, createCbaProvider } from './cba.js';
import { CBN_METADATA, createCbnProvider } from './cbn.js';
import { CBR_METADATA, createCbrProvider } from './cbr.js';
import { CBU_METADATA, createCbuProvider } from './cbu.js';
import { createCnbProvider } from './cnb.js';
import { createDnbProvider, DNB_METADATA } from './dnb.js';
import { createEcbProvider } from './ecb.js';
import { createFileProvider } from './file.js';
import { createFrankfurterProvider } from './frankfurter.js';
import { createMnbProvider, MNB_METADATA } from './mnb.js';
import { createNbgProvider, NBG_METADATA } from './nbg.js';
import { createNbkProvider, NBK_METADATA } from './nbk.js';
import { createNbpProvider } from './nbp.js';
import { createNbrbProvider, NBRB_METADATA } from './nbrb.js';
import { createNbrmProvider, NBRM_METADATA } from './nbrm.js';
import { createNbtProvider, NBT_METADATA } from './nbt.js';
import { createNbuProvider } from './nbu.js';
import { createNorgesBankProvider, NORGES_BANK_METADATA } from './norgesbank.js';
import { createOpenExchangeRatesProvider } from './openexchangerates.js';
import { createPegProvider, PARITIES, PEG_ANCHORS, PEG_FAMILY, pegProviderId } from './peg.js';
import { createRbaProvider, RBA_METADATA } from './rba.js';
import { createRiksbankProvider, RIKSBANK_METADATA } from './riksbank.js';
import { createSarbProvider, SARB_METADATA } from './sarb.js';
import type { ProviderEntry } from './types.js';

// The shared types, for the registry's callers (configuration, wiring, HTTP); adapters take them from types.ts.
export { PROVIDER_KINDS, type ProviderContext, type ProviderEntry, type ProviderKind, type ProviderLog, type ProviderMetadata } from './types.js';

function required(value: string | undefined, what: string): string {
  // loadConfig refuses a configuration without it; this guards the type, not the input.
  if (value === undefined) throw new Error(`${what} is not configured`);
  return value;
}

/**
 * In order of default preference (EXRATES_PROVIDERS, README "Order of preference"): first-hand
 * sources only. Each central bank serves its own currency whatever its place (src/core/preference.ts);
 * for the other currencies, the ECB first (the reference most contracts name); then the central
 * banks of other bases, each adding the currencies the ones before it do not quote; Banca d'Italia last, whose indicative rates of nearly every currency fill in the
 * rest, and whose whole day is there to compare every other provider's numbers with.
 */
export const PROVIDER_REGISTRY: readonly ProviderEntry[] = [
  {
    id: 'ecb',
    metadata: {
      name: 'European Central Bank',
      label: 'ECB',
      kind: 'central bank',
      base: 'EUR',
      quotes: 'the euro reference rates of about 30 currencies',
      termsUrl: 'https://www.ecb.europa.eu/home/disclaimer/html/index.en.html',
      schedule: 'TARGET business days, around 16:00 CET',
    },
    defaultUrl: 'https://www.ecb.europa.eu/stats/eurofxref',
    urlVariable: 'EXRATES_ECB_URL',
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock }) => createEcbProvider({ baseUrl, timeoutMs, clock }),
  },
  {
    id: 'nbu',
    metadata: {
      name: 'National Bank of Ukraine',
      label: 'NBU',
      kind: 'central bank',
      base: 'UAH',
      quotes: 'the official hryvnia rates of about 60 currencies and metals',
      termsUrl: 'https://bank.gov.ua/en/useterms',
      schedule: "Ukrainian business days (about 10:00–12:30 UTC), for the next day; weekends and holidays carry the last day's rates",
    },
    defaultUrl: 'https://bank.gov.ua',
    urlVariable: 'EXRATES_NBU_URL',
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbuProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbp',
    metadata: {
      name: 'Narodowy Bank Polski',
      label: 'NBP',
      kind: 'central bank',
      base: 'PLN',
      quotes: 'the average zloty rates of table A (about 32 currencies)',
      termsUrl: 'https://api.nbp.pl/en.html',
      schedule: 'Polish business days, between 11:45 and 12:15 Warsaw time',
    },
    defaultUrl: 'https://api.nbp.pl',
    urlVariable: 'EXRATES_NBP_URL',
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbpProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'cnb',
    metadata: {
      name: 'Czech National Bank',
      label: 'CNB',
      kind: 'central bank',
      base: 'CZK',
      quotes: 'the koruna exchange rate fixing of about 30 currencies',
      termsUrl: 'https://www.cnb.cz/en/footer/general-terms-and-conditions/',
      schedule: 'Czech business days, after 14:30 Prague time',
    },
    defaultUrl: 'https://api.cnb.cz',
    urlVariable: 'EXRATES_CNB_URL',
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createCnbProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'boc',
    metadata: BOC_METADATA,
    defaultUrl: 'https://www.bankofcanada.ca',
    urlVariable: urlVariableOf('boc'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBocProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'norgesbank',
    metadata: NORGES_BANK_METADATA,
    defaultUrl: 'https://data.norges-bank.no',
    urlVariable: urlVariableOf('norgesbank'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNorgesBankProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'riksbank',
    metadata: RIKSBANK_METADATA,
    defaultUrl: 'https://api.riksbank.se',
    urlVariable: urlVariableOf('riksbank'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createRiksbankProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'boe',
    metadata: BOE_METADATA,
    defaultUrl: 'https://www.bankofengland.co.uk',
    urlVariable: urlVariableOf('boe'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBoeProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'boi',
    metadata: BOI_METADATA,
    defaultUrl: 'https://edge.boi.gov.il',
    urlVariable: urlVariableOf('boi'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBoiProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbrb',
    metadata: NBRB_METADATA,
    defaultUrl: 'https://api.nbrb.by',
    urlVariable: urlVariableOf('nbrb'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbrbProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'cbr',
    metadata: CBR_METADATA,
    defaultUrl: 'https://www.cbr.ru',
    urlVariable: urlVariableOf('cbr'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createCbrProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'cbu',
    metadata: CBU_METADATA,
    defaultUrl: 'https://cbu.uz',
    urlVariable: urlVariableOf('cbu'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createCbuProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'bcra',
    metadata: BCRA_METADATA,
    defaultUrl: 'https://api.bcra.gob.ar',
    urlVariable: urlVariableOf('bcra'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBcraProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'cbn',
    metadata: CBN_METADATA,
    defaultUrl: 'https://www.cbn.gov.ng',
    urlVariable: urlVariableOf('cbn'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createCbnProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'cba',
    metadata: CBA_METADATA,
    defaultUrl: 'https://api.cba.am',
    urlVariable: urlVariableOf('cba'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createCbaProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbt',
    metadata: NBT_METADATA,
    defaultUrl: 'https://www.nbt.tj',
    urlVariable: urlVariableOf('nbt'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbtProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'rba',
    metadata: RBA_METADATA,
    defaultUrl: 'https://www.rba.gov.au',
    urlVariable: urlVariableOf('rba'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createRbaProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'dnb',
    metadata: DNB_METADATA,
    defaultUrl: 'https://api.statbank.dk',
    urlVariable: urlVariableOf('dnb'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createDnbProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'bnr',
    metadata: BNR_METADATA,
    defaultUrl: 'https://www.bnr.ro',
    urlVariable: urlVariableOf('bnr'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBnrProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'mnb',
    metadata: MNB_METADATA,
    defaultUrl: 'https://www.mnb.hu',
    urlVariable: urlVariableOf('mnb'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createMnbProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbg',
    metadata: NBG_METADATA,
    defaultUrl: 'https://nbg.gov.ge',
    urlVariable: urlVariableOf('nbg'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbgProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbk',
    metadata: NBK_METADATA,
    defaultUrl: 'https://nationalbank.kz',
    urlVariable: urlVariableOf('nbk'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbkProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'sarb',
    metadata: SARB_METADATA,
    defaultUrl: 'https://custom.resbank.co.za',
    urlVariable: urlVariableOf('sarb'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createSarbProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'nbrm',
    metadata: NBRM_METADATA,
    defaultUrl: 'https://www.nbrm.mk',
    urlVariable: urlVariableOf('nbrm'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createNbrmProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'bnm',
    metadata: BNM_METADATA,
    defaultUrl: 'https://api.bnm.gov.my',
    urlVariable: urlVariableOf('bnm'),
    byDefault: true,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBnmProvider({ baseUrl, timeoutMs, clock, log }),
  },
  {
    id: 'bancaditalia',
    metadata: {
      name: "Banca d'Italia",
      label: "Banca d'Italia",
      kind: 'central bank',
      base: 'EUR',
      quotes: 'indicative euro rates of about 150 currencies (nearly every currency in use)',
      // Its terms are the disclaimer every document carries and the portal shows.
      termsUrl: 'https://tassidicambio.bancaditalia.it/',
      schedule: 'Italian business days, in the late afternoon (about 16:00–18:30 UTC)',
    },
    defaultUrl: 'https://tassidicambio.bancaditalia.it',
    urlVariable: 'EXRATES_BANCADITALIA_URL',
    byDefault: true,
    loadsOnRequest: true,
    create: ({ baseUrl, timeoutMs, clock, log }) => createBancaDItaliaProvider({ baseUrl, timeoutMs, clock, log }),
  },
  // Last among the defaults: a parity is the legal number, but a bank's fixing is what the market
  // paid that day, and a parity can be changed overnight by decision (a devaluation) while the
  // table changes only with a release. So the parities serve a pegged currency only where no bank
  // quotes it, or where the cross-check set the banks' numbers aside, and otherwise check them.
  ...PEG_ANCHORS.map(
    (anchor): ProviderEntry => ({
      id: pegProviderId(anchor),
      metadata: {
        name: `Legal parities against the ${anchor}`,
        label: `peg ${anchor}`,
        kind: 'peg',
        base: anchor,
        quotes: `the parities fixed by law or treaty against the ${anchor}: ${PARITIES.filter((p) => p.anchor === anchor && p.until === undefined)
          .map((p) => p.currency)
          .join(', ')}`,
        termsUrl: null,
        schedule: 'every day: fixed by law or treaty, unchanged until the issuer changes it',
      },
      defaultUrl: undefined,
      urlVariable: undefined,
      byDefault: true,
      loadsOnRequest: false,
      family: PEG_FAMILY,
      create: ({ clock }) => createPegProvider({ anchor, clock }),
    }),
  ),
  {
    id: 'frankfurter',
    metadata: {
      name: 'Frankfurter',
      label: 'Frankfurter',
      kind: 'aggregator',
      base: 'EUR',
      quotes: 'about 160 currencies gathered from many central banks, fetched on first request',
      termsUrl: 'https://frankfurter.dev',
      schedule: "each source bank's own business days",
    },
    defaultUrl: 'https://api.frankfurter.dev',
    urlVariable: 'EXRATES_FRANKFURTER_URL',
    byDefault: false,
    loadsOnRequest: true,
    create: ({ baseUrl, timeoutMs, clock }) => createFrankfurterProvider({ baseUrl, timeoutMs, clock }),
  },
  {
    id: 'openexchangerates',
    metadata: {
      name: 'Open Exchange Rates',
      label: 'Open Exchange Rates',
      kind: 'commercial',
      base: 'USD',
      quotes: 'about 170 currencies against the US dollar (an app id is required)',
      termsUrl: 'https://openexchangerates.org/terms',
      schedule: 'hourly, depending on the plan',
    },
    defaultUrl: 'https://openexchangerates.org/api',
    urlVariable: 'EXRATES_OXR_URL',
    byDefault: false,
    loadsOnRequest: false,
    create: ({ baseUrl, timeoutMs, clock, oxrAppId }) =>
      createOpenExchangeRatesProvider({ baseUrl, appId: required(oxrAppId, 'EXRATES_OXR_APP_ID'), timeoutMs, clock }),
  },
  {
    id: 'file',
    metadata: {
      name: 'ECB file',
      label: 'file',
      kind: 'file',
      base: 'EUR',
      quotes: 'the currencies of an ECB CSV or XML file the operator supplies',
      termsUrl: null,
      schedule: 'whenever the operator replaces the file',
    },
    defaultUrl: undefined,
    urlVariable: undefined,
    byDefault: false,
    loadsOnRequest: false,
    create: ({ timeoutMs, fileUrl }) => createFileProvider({ location: required(fileUrl, 'EXRATES_FILE_URL'), timeoutMs }),
  },
];

/** The setting naming a new provider's origin: EXRATES_ and its id in capitals, then _URL. */
export function urlVariableOf(id: string): string {
  return `EXRATES_${id.toUpperCase()}_URL`;
}

export function providerEntry(id: string): ProviderEntry | undefined {
  return PROVIDER_REGISTRY.find((entry) => entry.id === id);
}

/** Each family name and its providers' ids, in the registry's order. */
export const PROVIDER_FAMILIES: ReadonlyMap<string, readonly string[]> = (() => {
  const families = new Map<string, string[]>();
  for (const entry of PROVIDER_REGISTRY) if (entry.family !== undefined) families.set(entry.family, [...(families.get(entry.family) ?? []), entry.id]);
  return families;
})();

/** Provider ids and family names as a list of provider ids: a family's providers in its place. */
export function expandFamilies(names: readonly string[]): string[] {
  return names.flatMap((name) => PROVIDER_FAMILIES.get(name) ?? [name]);
}
