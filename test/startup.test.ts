/**
 * Starts that cannot succeed: the real `exrates` process must say why in one line and exit 1,
 * never hang with timers and reconnecting clients left behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { listeningLine } from '../src/announce.js';
import { noRatesAdvice } from '../src/offline-advice.js';
import { createLogger } from '../src/log.js';
import { startServer } from '../src/server.js';
import { captureLog } from './support/apps.js';
import { parseMetrics, sampleKey } from './support/prometheus.js';
import { ensureBuilt, lines, records, runCommand, type RunningCommand, startCommand } from './support/processes.js';
import { get } from './support/http.js';
import { freePort } from './support/ports.js';
import { createPostgresSchema, postgresAvailable } from './services.js';
import { processEnv } from './support/env.js';
import { settleUntil, sleep, waitFor } from './support/wait.js';
import { ECB_CSV, FIXED_NOW, tempDir } from './helper.js';

const pgAvailable = await postgresAvailable();

describe('Redis unreachable at start', { skip: !pgAvailable && 'PostgreSQL is not available' }, () => {
  const dir = tempDir('exrates-startup-');
  let schema: Awaited<ReturnType<typeof createPostgresSchema>>;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    await ensureBuilt();
    schema = await createPostgresSchema();
    // A port nothing listens on: connections to it are refused.
    const closedPort = await freePort();
    env = processEnv({
      EXRATES_DATABASE_URL: schema.url,
      EXRATES_REDIS_URL: `redis://127.0.0.1:${closedPort}`,
      EXRATES_PROVIDERS: 'file',
      EXRATES_FILE_URL: ECB_CSV,
      EXRATES_NOW: FIXED_NOW,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
    });
  });
  after(async () => {
    await schema?.drop();
    dir.remove();
  });

  for (const command of [['serve'], ['keys', 'list']]) {
    test(`${command.join(' ')} exits 1 with one line within 15 s`, async () => {
      const run = await runCommand(command, { env, cwd: dir.path, timeoutMs: 15_000 });
      assert.equal(run.timedOut, false, `still running after 15 s:\n${run.stdout}${run.stderr}`);
      assert.equal(run.code, 1);
      const said = [...lines(run.stdout), ...lines(run.stderr)];
      assert.equal(said.length, 1, `expected one line, got:\n${said.join('\n')}`);
      assert.match(said[0]!, /^exrates: cannot connect to Redis at redis:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    });
  }
});

/** SIGTERM, and the exit of a graceful shutdown. */
async function stop(server: RunningCommand): Promise<void> {
  server.child.kill('SIGTERM');
  const run = await server.done;
  assert.equal(run.code, 0, server.output());
}

describe('what a person sees when the service starts', () => {
  const dir = tempDir('exrates-startup-');
  before(() => ensureBuilt());
  after(() => dir.remove());

  const offline = (variables: Record<string, string> = {}) =>
    processEnv({
      EXRATES_DATABASE_URL: `sqlite:${join(dir.path, `${Math.random().toString(36).slice(2)}.db`)}`,
      EXRATES_PROVIDERS: 'file',
      EXRATES_FILE_URL: ECB_CSV,
      EXRATES_NOW: FIXED_NOW,
      HOST: '127.0.0.1',
      ...variables,
    });

  test('a missing EXRATES_FILE_URL file stops the start with one line', async () => {
    const missing = join(dir.path, 'nowhere', 'eurofxref-hist.csv');
    const run = await runCommand(['serve'], { env: offline({ EXRATES_FILE_URL: missing, PORT: String(await freePort()) }), cwd: dir.path, timeoutMs: 15_000 });
    assert.equal(run.timedOut, false, `still running after 15 s:\n${run.stdout}${run.stderr}`);
    assert.equal(run.code, 1);
    assert.deepEqual([...lines(run.stdout), ...lines(run.stderr)], [`exrates: EXRATES_FILE_URL=${missing}: no such file (${missing})`]);
  });

  test('JSON logs carry a line saying where it listens, then one saying what it loaded', async () => {
    const port = await freePort();
    const dbPath = join(dir.path, 'announce.db');
    const server = startCommand(['serve'], { env: offline({ PORT: String(port), EXRATES_DATABASE_URL: `sqlite:${dbPath}` }), cwd: dir.path });
    try {
      await waitFor(() => records(server.output()).some((r) => String(r.msg).startsWith('ready:')), 20_000, 'the ready line', 100);
      const messages = records(server.output()).map((r) => String(r.msg));
      const base = `http://127.0.0.1:${port}`;
      assert.ok(
        messages.includes(`exrates listening on ${base}/; portal ${base}/, API docs ${base}/docs; store: SQLite ${dbPath}; providers: file; loading rates…`),
        messages.join('\n'),
      );
      assert.ok(messages.includes('ready: 39,750 file rates, 5 years, newest 2026-03-05'), messages.join('\n'));
      // EXRATES_CONTACT_EMAIL is not set: the placeholder is warned about.
      const contact = records(server.output()).filter((r) => String(r.msg).startsWith('EXRATES_CONTACT_EMAIL'));
      assert.deepEqual(
        contact.map((r) => [r.level, r.msg]),
        [[40, 'EXRATES_CONTACT_EMAIL is not set: the portal, the API docs and every 401 tell users to ask keys@exrates.invalid for a key, an address nobody reads; set it to yours']],
      );
      // A day after the newest day on the clock EXRATES_NOW starts: recent enough, nothing to warn of.
      await sleep(500);
      assert.ok(!server.output().includes('are served as the latest'), server.output());
    } finally {
      await stop(server);
    }
  });

  test('on the real clock, an old file loads and the log warns of its age, naming its newest day; a contact address set is not warned about', async () => {
    const port = await freePort();
    const env = offline({ PORT: String(port), EXRATES_CONTACT_EMAIL: 'rates@example.org' });
    delete env.EXRATES_NOW;
    const server = startCommand(['serve'], { env, cwd: dir.path });
    try {
      const warned = () => records(server.output()).find((r) => String(r.msg).includes('are served as the latest'));
      await waitFor(() => warned() !== undefined, 30_000, 'the old-rates warning', 100);
      const today = new Date().toISOString().slice(0, 10);
      const days = Math.round((Date.parse(today) - Date.parse('2026-03-05')) / 86_400_000);
      assert.ok(days > 7, 'this test needs a machine clock a week past the shared data');
      const warning = warned()!;
      assert.equal(warning.level, 40);
      assert.deepEqual([warning.provider, warning.newestDay, warning.ageDays], ['file', '2026-03-05', days]);
      assert.equal(
        warning.msg,
        `the newest file rates are of 2026-03-05, ${days} days before today (${today}), and are served as the latest: give the provider a current source, or set EXRATES_NOW to replay that time (warned past EXRATES_OLD_RATES_DAYS=7)`,
      );
      assert.ok(!server.output().includes('EXRATES_CONTACT_EMAIL is not set'), server.output());
    } finally {
      await stop(server);
    }
  });

  test('EXRATES_LOG_FORMAT=pretty writes readable lines through pino-pretty', async () => {
    const port = await freePort();
    const server = startCommand(['serve'], { env: offline({ PORT: String(port), EXRATES_LOG_FORMAT: 'pretty' }), cwd: dir.path });
    try {
      await waitFor(() => / INFO: ready: /.test(server.output()), 20_000, 'the ready line', 100);
      assert.match(server.output(), /^\[\d\d:\d\d:\d\d\] INFO: exrates listening on http:\/\/127\.0\.0\.1:\d+\//m);
      assert.deepEqual(lines(server.output()).filter((line) => line.startsWith('{"level"')), [], 'no JSON records');
    } finally {
      await stop(server);
    }
  });

  test('each worker says which it is', async () => {
    const port = await freePort();
    const server = startCommand(['serve'], { env: offline({ PORT: String(port), EXRATES_WORKERS: '2' }), cwd: dir.path });
    try {
      await waitFor(() => records(server.output()).filter((r) => String(r.msg).startsWith('exrates listening on')).length === 2, 20_000, 'both workers listening', 100);
      const workers = records(server.output())
        .filter((r) => String(r.msg).startsWith('exrates listening on'))
        .map((r) => r.worker)
        .sort();
      assert.deepEqual(workers, [1, 2]);
    } finally {
      await stop(server);
    }
  });

  test('bound to every interface, the line says so and gives a URL that opens', () => {
    const config = loadConfig({ HOST: '0.0.0.0', EXRATES_DATABASE_URL: 'postgres://exrates:secret@db:5432/exrates' });
    assert.equal(
      listeningLine(config, 8080),
      'exrates listening on http://localhost:8080/ (bound to 0.0.0.0: every network interface); portal http://localhost:8080/, API docs http://localhost:8080/docs; store: PostgreSQL postgres://***@db:5432/exrates; providers: ecb, nbu, nbp, cnb, boc, norgesbank, riksbank, boe, boi, nbrb, cbr, cbu, bcra, cbn, cba, nbt, rba, dnb, bnr, mnb, nbg, nbk, sarb, nbrm, bnm, bancaditalia, peg-eur, peg-usd, peg-zar, peg-inr, peg-gbp, peg-sgd; loading rates…',
    );
  });
});

describe('no network', () => {
  const dir = tempDir('exrates-offline-');
  let unreachable = '';
  before(async () => {
    await ensureBuilt();
    // Nothing listens there: every request is refused, as on a machine without network.
    unreachable = `http://127.0.0.1:${await freePort()}`;
  });
  after(() => dir.remove());
  const env = (variables: Record<string, string> = {}) =>
    processEnv({
      EXRATES_DATABASE_URL: `sqlite:${join(dir.path, 'offline.db')}`,
      EXRATES_PROVIDERS: 'ecb,frankfurter',
      EXRATES_ECB_URL: unreachable,
      EXRATES_FRANKFURTER_URL: unreachable,
      HOST: '127.0.0.1',
      ...variables,
    });
  const advice = /EXRATES_PROVIDERS=file EXRATES_FILE_URL=\/path\/to\/eurofxref-hist\.csv/;

  test('the log says in one short line what failed and, last, what to do; /readyz too', async () => {
    const port = await freePort();
    // The parities are computed here, so they load offline; beside the others they do not make it ready.
    const server = startCommand(['serve'], { env: env({ PORT: String(port), EXRATES_PROVIDERS: 'ecb,frankfurter,peg' }), cwd: dir.path });
    const fix = noRatesAdvice(loadConfig(env()));
    try {
      await waitFor(() => records(server.output()).some((r) => String(r.msg).startsWith('no rates loaded')), 20_000, 'the no-rates line', 100);
      const line = records(server.output()).find((r) => String(r.msg).startsWith('no rates loaded'))!;
      assert.equal(line.level, 50);
      assert.match(String(line.msg), /^no rates loaded: ECB failed \(ECONNREFUSED; \/readyz has each error\)\. To fix: check that this machine can reach 127\.0\.0\.1:\d+ /);
      assert.ok(String(line.msg).endsWith(`To fix: ${fix}`), String(line.msg));
      assert.match(fix, advice);
      assert.ok(String(line.msg).length < 300, `${String(line.msg).length} characters`);
      assert.ok(!server.output().includes('serving stored rates as stale'), 'nothing is stored, so nothing is served as stale');
      const ready = await get(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 503);
      const body = JSON.parse(ready.body) as { status: string; next?: string; providers: Array<{ id: string; lastError: string | null }> };
      assert.equal(body.status, 'no rates loaded');
      assert.match(body.next ?? '', advice);
      // The path asked is kept there, not in the console.
      assert.match(body.providers.find((p) => p.id === 'ecb')?.lastError ?? '', /\/eurofxref-hist\.zip/);

      // Warnings and errors so far: the contact address, then the line (the retries: the next test).
      const told = records(server.output()).filter((r) => Number(r.level) >= 40);
      assert.deepEqual(
        told.map((r) => [r.level, String(r.msg).split(':')[0]]),
        [[40, 'EXRATES_CONTACT_EMAIL is not set'], [50, 'no rates loaded']],
      );
      assert.ok(!server.output().includes(unreachable), 'no URL of an upstream in the console');
      assert.ok(!server.output().includes('eurofxref-hist.zip'), 'nor the path asked');
    } finally {
      await stop(server);
    }
  });

  test('each retry of a start that loaded nothing is one line that repeats the fix, at the times of the backoff', async (t) => {
    // The server of `exrates serve`, in this process, so that node:test's mocked clock drives its
    // timers: the first retry 15 s after the start, its line when the retry's failures are summed up.
    const config = loadConfig(env({ PORT: String(await freePort()), EXRATES_PROVIDERS: 'ecb,frankfurter,peg' }));
    const log = captureLog();
    // The fetch machinery is set up before the clock is faked, so it keeps real timers.
    await fetch(unreachable).catch(() => undefined);
    // A second past a wall-clock multiple of the interval: the next regular refresh is far away.
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-03-06T12:00:01Z') });
    t.after(() => mock.timers.reset());
    const server = await startServer(config, { log: createLogger(config.logLevel, log.stream) });
    t.after(() => server.close());
    await server.initialLoad;
    const told = () => log.lines.filter((r) => Number(r.level) >= 40).map((r) => [r.level, r.msg]);
    const fix = noRatesAdvice(config);
    assert.deepEqual(told().map(([level, msg]) => [level, String(msg).split(':')[0]]), [[50, 'no rates loaded']]);
    const ecbFailures = async () => parseMetrics(await server.deps.metricsText()).get(sampleKey('exrates_refresh_total', { provider: 'ecb', outcome: 'failure' })) ?? 0;
    assert.equal(await ecbFailures(), 1);

    // Milliseconds the clock has moved since the provider's next attempt was scheduled.
    let sinceScheduled = 0;
    for (const [failures, backoff, next] of [
      [2, 15_000, 30],
      [3, 30_000, 60],
    ] as const) {
      mock.timers.tick(backoff - sinceScheduled - 1);
      await settleUntil(async () => true, 'the I/O in flight');
      assert.equal(await ecbFailures(), failures - 1, `no retry before ${backoff} ms`);
      mock.timers.tick(1);
      await settleUntil(async () => (await ecbFailures()) === failures, 'the failed refresh');
      // The failures of one retry are summed up 2 s after the first of them.
      mock.timers.tick(1_999);
      await settleUntil(async () => true, 'the I/O in flight');
      assert.equal(told().length, failures - 1, 'no line before the retry is summed up');
      mock.timers.tick(1);
      await settleUntil(async () => told().length === failures, 'the retry line');
      assert.deepEqual(told().at(-1), [40, `still no rates from ecb (ECONNREFUSED); next try in ${next} s. To fix: ${fix}`]);
      sinceScheduled = 2_000;
    }
    const written = log.lines.map((r) => JSON.stringify(r)).join('\n');
    assert.ok(!written.includes(unreachable), 'no URL of an upstream in the log');
    assert.ok(!written.includes('eurofxref-hist.zip'), 'nor the path asked');
  });

  test('exrates refresh prints each failure once, the advice serve gives, and nothing about serving', async () => {
    const run = await runCommand(['refresh'], { env: env(), cwd: dir.path, timeoutMs: 30_000 });
    assert.equal(run.code, 1);
    // Frankfurter holds no currency yet, so it fetched nothing: not a success of "0 rates".
    assert.equal(run.stdout, 'frankfurter: nothing stored: it loads a currency when a request first asks for it, and none has been asked for yet\n');
    const said = lines(run.stderr);
    assert.equal(said.length, 3, run.stderr);
    // The host, not the whole URL.
    assert.match(said[0]!, /^ecb: failed: 127\.0\.0\.1:\d+: fetch failed: ECONNREFUSED/);
    // Word for word what serve says when nothing could be loaded: one function writes both.
    assert.equal(said[1], `hint: ${noRatesAdvice(loadConfig(env()))}`);
    assert.match(said[1]!, advice);
    assert.equal(said[2], 'note: not recorded as a failure of ecb: a running service reports its providers from its own refreshes');
    assert.doesNotMatch(run.stderr, /stale|serving/);
  });

  test('the whole URL of a failed refresh is in the debug log', async () => {
    const run = await runCommand(['refresh'], { env: env({ EXRATES_LOG_LEVEL: 'debug', EXRATES_LOG_FORMAT: 'json' }), cwd: dir.path, timeoutMs: 30_000 });
    assert.equal(run.code, 1);
    const failed = records(run.stderr).find((r) => r.msg === 'refresh failed' && r.provider === 'ecb');
    assert.ok(failed, run.stderr);
    assert.equal(failed.level, 20);
    assert.match(String(failed.err), new RegExp(`^${unreachable.replaceAll('.', '\\.')}/eurofxref-hist\\.zip: fetch failed: ECONNREFUSED`));
  });
});

test('EXRATES_LOG_FORMAT=auto is readable on a terminal and JSON anywhere else', async () => {
  const { resolveLogFormat } = await import('../src/log.js');
  assert.equal(resolveLogFormat('auto', { isTTY: true }), 'pretty');
  assert.equal(resolveLogFormat('auto', {}), 'json');
  assert.equal(resolveLogFormat('json', { isTTY: true }), 'json');
  assert.equal(resolveLogFormat('pretty', {}), 'pretty');
});
