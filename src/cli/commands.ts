import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import cluster from 'node:cluster';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, CommanderError } from 'commander';
import { noRatesAdvice } from '../offline-advice.js';
import { ConfigError, environmentWithDotenv, loadConfig, PLACEHOLDER_CONTACT_EMAIL, RATES_SETTINGS, SERVING_SETTINGS, unknownVariables, type Config, type ProviderId } from '../config.js';
import { issueApiKey, revokeApiKeys, shownKey } from '../core/api-keys.js';
import { outdatedRates } from '../core/freshness.js';
import type { ApiKeyRecord, RateStore } from '../core/ports.js';
import { retentionStart, shortError, storeDocument } from '../core/refresh.js';
import { providerEntry } from '../providers/registry.js';
import { createRefresher } from '../core/refresher.js';
import { counted, grouped } from '../core/text.js';
import { utcDay } from '../core/time.js';
import { createDeps, STORE_FAULT_DRAIN_MS, STORE_WATCH_MS, type Deps } from '../deps.js';
import { createLogger } from '../log.js';
import { ECB_HISTORY_MAX_BYTES, parseEcbDocument } from '../providers/ecb-format.js';
import { readSource } from '../providers/fetch-bytes.js';
import { migrateToLatest, openDatabase, sqliteFile } from '../storage/database.js';
import { startServer } from '../server.js';
import { isClusterWorker, runPrimary, workerPorts } from '../cluster.js';

/** Providers whose rates come in ECB's formats, so an ECB file can be stored as theirs. */
const IMPORT_PROVIDERS = ['ecb', 'file'] as const satisfies readonly ProviderId[];

function importProvider(requested: string | undefined, configured: readonly ProviderId[]): ProviderId {
  if (requested === undefined) return configured.find((p) => (IMPORT_PROVIDERS as readonly string[]).includes(p)) ?? 'ecb';
  if (!(IMPORT_PROVIDERS as readonly string[]).includes(requested)) {
    throw new Error(`--provider '${requested}' is not valid: an ECB file can be stored as ${IMPORT_PROVIDERS.join(' or ')}`);
  }
  return requested as ProviderId;
}

/**
 * The validated configuration; variables that look like settings but are none are warned about
 * (once: not again by each worker), on the stream the command logs to.
 */
function config(logTo: NodeJS.WriteStream = process.stderr, unused: readonly string[] = []): Config {
  const env = environmentWithDotenv();
  const cfg = loadConfig(env, { unused });
  const unknown = isClusterWorker() ? [] : unknownVariables(env);
  if (unknown.length > 0) {
    const log = createLogger(cfg.logLevel, logTo as never, cfg.logFormat);
    for (const warning of unknown) log.warn({}, warning);
  }
  return cfg;
}

/**
 * What each kind of command leaves unread, so that a bad value there stops nothing it does: a
 * command that stores or fetches rates reads all but the serving settings; one that only works on
 * the store (migrate, keys) reads neither those nor the rates' settings, nor EXRATES_NOW: the
 * replay clock is the serving process's, and a key is issued or revoked at the real time.
 */
const RATES_COMMAND_UNUSED = SERVING_SETTINGS;
const STORE_COMMAND_UNUSED = [...SERVING_SETTINGS, ...RATES_SETTINGS, 'EXRATES_NOW'];

/** A command that works on the replay clock says so, with the day it takes for today. */
function noteReplayClock(deps: Deps): void {
  if (deps.config.now === undefined) return;
  console.error(`note: EXRATES_NOW is set: this command runs on the replay clock, started at ${deps.config.now.toISOString()} (today is ${utcDay(deps.clock.now())} for it)`);
}

/**
 * Runs a command on the configured store, without the HTTP server, and always closes the store.
 * Commands log to stderr, warnings and worse unless the level is set lower, so their stdout stays
 * clean for scripts; `quiet` leaves the reporting of failures to the command itself.
 */
async function withDeps<T>(run: (deps: Deps) => Promise<T>, options: { quiet?: boolean; config?: Config } = {}): Promise<T> {
  const cfg = options.config ?? config(process.stderr, STORE_COMMAND_UNUSED);
  const level = options.quiet && ['info', 'warn'].includes(cfg.logLevel) ? 'error' : cfg.logLevel === 'info' ? 'warn' : cfg.logLevel;
  // A command run from another folder would otherwise work on a new, empty store without a word.
  const file = sqliteFile(cfg.databaseUrl);
  if (file !== undefined && !existsSync(file)) {
    const relative = !isAbsolute(cfg.databaseUrl.slice('sqlite:'.length));
    console.error(`note: no store at ${file}; this command creates a new, empty one (EXRATES_DATABASE_URL names the store${relative ? ', relative to the working directory' : ''})`);
  }
  const deps = await createDeps(cfg, { log: createLogger(level, process.stderr as never, cfg.logFormat), replayQuotaJournal: false });
  try {
    return await run(deps);
  } finally {
    await deps.close();
  }
}

/** The package's version, from package.json beside src/ and dist/. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** A person is told the service's contact address is a placeholder, once per start. */
function warnOfPlaceholderContact(config: Config, log: { warn(o: object, m: string): void }): void {
  if (config.contactEmail !== PLACEHOLDER_CONTACT_EMAIL) return;
  log.warn(
    { contactEmail: config.contactEmail },
    `EXRATES_CONTACT_EMAIL is not set: the portal, the API docs and every 401 tell users to ask ${PLACEHOLDER_CONTACT_EMAIL} for a key, an address nobody reads; set it to yours`,
  );
}

/** Warns of each provider whose newest stored day is older than EXRATES_OLD_RATES_DAYS, naming the day. */
async function warnOfOldRates(deps: Deps): Promise<void> {
  const today = utcDay(deps.clock.now());
  for (const id of deps.config.providers) {
    const outdated = outdatedRates(id, await deps.rates.latestDay(id), today, deps.config.oldRatesDays);
    if (outdated) deps.log.warn({ provider: id, newestDay: outdated.newestDay, ageDays: outdated.ageDays }, outdated.message);
  }
}

/**
 * The store as a one-off command's refresh sees it: rates are stored as on any refresh, but a
 * failed attempt is not recorded. The command may run with settings other than the service's
 * (another EXRATES_FILE_URL, no network), and what the service reports about its providers
 * (`stale`, /readyz) must come from its own refreshes; the command reports its failures itself.
 */
function withoutFailedAttempts(store: RateStore): RateStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'recordAttempt') return Reflect.get(target, property, receiver) as unknown;
      const recordAttempt: RateStore['recordAttempt'] = async (provider, outcome) => (outcome.ok ? target.recordAttempt(provider, outcome) : undefined);
      return recordAttempt;
    },
  });
}

/** What a refresh that stored nothing says: why, and what the store holds of that provider. */
async function nothingStoredLine(deps: Deps, provider: string): Promise<string> {
  const newest = await deps.rates.latestDay(provider);
  if (newest !== null) return `nothing new stored (newest stored day ${newest})`;
  if (providerEntry(provider)?.loadsOnRequest) return 'nothing stored: it loads a currency when a request first asks for it, and none has been asked for yet';
  return 'nothing stored: it published no rates';
}

/** What `keys create` says beside the key: where it went when that is not this terminal. */
export function issuedLine(record: Pick<ApiKeyRecord, 'tier' | 'owner' | 'prefix'>, stdoutIsTerminal: boolean): string {
  const issued = `issued a ${record.tier} key for ${record.owner} (prefix ${record.prefix})`;
  if (stdoutIsTerminal) return `${issued}; it is shown only now:`;
  return `${issued}; the key went to standard output, which is not this terminal (a file, a pipe or $(…) took it), and is not shown again`;
}

const CONFIGURATION_HELP = `
Configuration comes from environment variables and a .env file in the working directory;
every variable is described in docs/configuration.md.`;

export function buildCli(): Command {
  const program = new Command('exrates')
    .description('Self-hostable exchange-rates service: live mid-market rates, exact conversion and daily history.')
    .version(version(), '-V, --version', 'print the version and exit')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description(
      'apply pending migrations, load rates (EXRATES_HISTORY_YEARS of history, 5 by default, on an empty store) and serve the HTTP API, the portal at / and the API docs at /docs, refreshing rates in the background until SIGTERM or SIGINT',
    )
    .action(async () => {
      const cfg = config(process.stdout);
      let stopping = false;
      // A signal stops the process with 0; a store that can no longer be written, with 1.
      const onSignals = (stop: (signal: string) => Promise<void>, log: { info(o: object, m: string): void }, storeFault?: Promise<string>) => {
        const handle = (signal: string, code: number) => {
          // A second signal (a worker gets the terminal's and its main process's) changes nothing.
          if (stopping) return;
          stopping = true;
          log.info({ signal }, 'shutting down: draining in-flight requests');
          stop(signal)
            .then(() => process.exit(code))
            .catch((error: unknown) => {
              console.error(`exrates: shutdown failed: ${String(error)}`);
              process.exit(1);
            });
        };
        process.on('SIGTERM', () => handle('SIGTERM', 0));
        process.on('SIGINT', () => handle('SIGINT', 0));
        void storeFault?.then(() => sleep(STORE_FAULT_DRAIN_MS)).then(() => handle('store fault', 1));
      };
      if (cfg.workers > 1 && !isClusterWorker()) {
        const log = createLogger(cfg.logLevel, undefined, cfg.logFormat);
        warnOfPlaceholderContact(cfg, log);
        const primary = await runPrimary(cfg, log);
        onSignals((signal) => primary.stop(signal), log, primary.storeFault);
        return;
      }
      const ports = isClusterWorker() ? workerPorts(cfg) : undefined;
      // The only process holds the store's writer lock; workers work under their main process's.
      const server = await startServer(
        cfg,
        ports
          ? { migrate: false, ...(ports.quotas ? { quotas: ports.quotas } : {}), ...(ports.lock ? { lock: ports.lock } : {}), metricsText: ports.clusterMetrics, storeWatchMs: STORE_WATCH_MS }
          : { holdWriterLock: true, storeWatchMs: STORE_WATCH_MS },
      );
      ports?.reportMetrics(server.deps.metrics.registry);
      if (!isClusterWorker()) warnOfPlaceholderContact(cfg, server.deps.log);
      // Once per start: by the only process, or by the first worker.
      if (!isClusterWorker() || cluster.worker?.id === 1) {
        void server.initialLoad
          .then(() => warnOfOldRates(server.deps))
          .catch((error: unknown) => server.deps.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not check the age of the stored rates'));
      }
      onSignals(() => server.close(), server.deps.log, server.storeFault);
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      const cfg = config(process.stderr, STORE_COMMAND_UNUSED);
      const database = await openDatabase(cfg.databaseUrl);
      try {
        const result = await migrateToLatest(database.db);
        const applied = result.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
        console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await database.close();
      }
    });

  program
    .command('import')
    .description('load an ECB CSV (plain or zipped) or XML file into the store; it adds rates and removes none, and skips days older than the service keeps (EXRATES_HISTORY_YEARS, 5 years and a month by default, on the clock EXRATES_NOW sets)')
    .usage('[--provider ecb|file] FILE')
    .argument('<file>', 'path or URL of the file (required)')
    .option('--provider <id>', `store the rates as this provider: ${IMPORT_PROVIDERS.join(' or ')} (default: the first of them in EXRATES_PROVIDERS, else ecb)`)
    .action(async (file: string, options: { provider?: string }) => {
      const cfg = config(process.stderr, RATES_COMMAND_UNUSED);
      const provider = importProvider(options.provider, cfg.providers);
      if (!cfg.providers.includes(provider)) {
        console.error(`note: '${provider}' is not in EXRATES_PROVIDERS (${cfg.providers.join(', ')}); the service serves these rates once it is`);
      }
      await withDeps(async (deps) => {
        noteReplayClock(deps);
        console.error(`reading ${file}…`);
        const bytes = await readSource(file, { timeoutMs: deps.config.upstreamTimeoutMs, maxBytes: ECB_HISTORY_MAX_BYTES });
        const parsed = { ...parseEcbDocument(bytes), provider };
        const first = parsed.days[0]?.day;
        const last = parsed.days.at(-1)?.day;
        // Days the service does not keep are refused here, with the reason, rather than stored
        // for nothing: it would neither serve them nor keep them past its next refresh.
        const start = retentionStart(deps.clock, deps.config.historyYears);
        const kept = deps.config.historyYears === 'all' ? 'every year' : `${deps.config.historyYears} years and a month`;
        const replay = 'to replay older days, import them with EXRATES_NOW set as the service has it (its clock set back)';
        const document = { ...parsed, days: parsed.days.filter((d) => d.day >= start) };
        if (document.days.length === 0) {
          throw new Error(`nothing imported: every day of ${file} (${first} to ${last}) is before ${start}, and the service keeps ${kept} (from ${start}); ${replay}`);
        }
        const older = parsed.days.length - document.days.length;
        if (older > 0) console.error(`note: ${counted(older, 'day')} of this file before ${start} skipped: the service keeps ${kept} (from ${start}); ${replay}`);
        console.error(`storing ${counted(document.days.length, 'day')} (${document.days[0]!.day} to ${last}) as '${provider}'…`);
        // An import adds and removes nothing, so the rates it added are what the store gained.
        const before = await deps.rates.countQuotes();
        const outcome = await storeDocument(document, deps.rates, deps.clock, deps.log, { onlyAdd: true, years: deps.config.historyYears });
        const added = (await deps.rates.countQuotes()) - before;
        const fresh = added === 0 ? 'none new: every one was stored already' : added === outcome.quotes ? 'all new' : `${grouped(added)} new`;
        console.log(`imported ${counted(outcome.quotes, 'rate')} over ${counted(outcome.days, 'day')} as '${provider}', ${fresh} (newest day ${outcome.latestDay ?? 'none'})`);
      }, { config: cfg });
    });

  program
    .command('refresh')
    .description('fetch the latest rates from every configured provider once and report what changed')
    .action(async () => {
      await withDeps(async (deps) => {
        noteReplayClock(deps);
        const refresher = createRefresher({
          providers: deps.providers,
          store: withoutFailedAttempts(deps.rates),
          book: deps.book,
          clock: deps.clock,
          log: deps.log,
          metrics: deps.metrics,
          lock: deps.lock,
          intervalSeconds: deps.config.refreshSeconds,
        });
        const outcomes = await refresher.refreshAll();
        for (const outcome of outcomes) {
          if (!outcome.ok) console.error(`${outcome.provider}: failed: ${shortError(outcome.error ?? 'failed')}`);
          else if (outcome.quotes > 0) console.log(`${outcome.provider}: stored ${counted(outcome.quotes, 'rate')} over ${counted(outcome.days, 'day')} (newest day ${outcome.latestDay})`);
          else console.log(`${outcome.provider}: ${await nothingStoredLine(deps, outcome.provider)}`);
        }
        const failed = outcomes.filter((o) => !o.ok).map((o) => o.provider);
        if (failed.length > 0) {
          console.error(`hint: ${noRatesAdvice(deps.config)}`);
          console.error(`note: not recorded as a failure of ${failed.join(', ')}: a running service reports its providers from its own refreshes`);
          process.exitCode = 1;
        }
      }, { quiet: true, config: config(process.stderr, RATES_COMMAND_UNUSED) });
    });

  const keys = program.command('keys').description('issue, list and revoke API keys');
  keys
    .command('create')
    .description('issue a new key; it is printed once and only its hash is stored')
    .usage('--tier free|pro --owner EMAIL')
    .requiredOption('--tier <tier>', 'free or pro (required)')
    .requiredOption('--owner <email>', "the owner's e-mail address (required)")
    .action(async (options: { tier: string; owner: string }) => {
      await withDeps(async (deps) => {
        const { key, record } = await issueApiKey(deps.keys, options, deps.clock);
        console.error(issuedLine(record, process.stdout.isTTY === true));
        console.log(key);
      });
    });
  keys
    .command('list')
    .description('list keys (prefix, tier, owner, created, revoked)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withDeps(async (deps) => {
        const records = await deps.keys.list();
        if (options.json) {
          console.log(JSON.stringify(records, null, 2));
          return;
        }
        console.log(['prefix', 'tier', 'owner', 'created', 'revoked'].join('\t'));
        for (const r of records) console.log([r.prefix, r.tier, r.owner, r.createdAt, r.revokedAt ?? '-'].join('\t'));
      });
    });
  keys
    .command('revoke')
    .description('revoke a key: the whole key, or every active key that starts with a prefix as keys list shows it')
    .argument('<key-or-prefix>', 'the whole key, or its prefix as shown by keys list, e.g. exr_AbC12345 (required)')
    .action(async (given: string) => {
      await withDeps(async (deps) => {
        const revoked = await revokeApiKeys(deps.keys, given, deps.clock);
        if (revoked.length === 0) {
          // A whole key is named by its listed prefix only.
          throw new Error(shownKey(given) !== given ? `no active key is ${shownKey(given)} (unknown, or revoked already)` : `no active key starts with '${given}'`);
        }
        for (const r of revoked) console.log(`revoked ${r.prefix} (${r.tier}, ${r.owner})`);
      });
    });
  for (const command of [program, ...allCommands(program)]) command.addHelpText('after', CONFIGURATION_HELP);
  return program;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    // A configuration error is one line per bad setting, each with the command's name.
    if (error instanceof ConfigError) console.error(error.message.split('\n').map((line) => `exrates: ${line}`).join('\n'));
    else console.error(`exrates: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}

