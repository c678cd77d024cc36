/**
 * Starts that cannot succeed: the real `exrates` process must say why in one line and exit 1,
 * never hang with timers and reconnecting clients left behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { listeningLine } from '../src/announce.js';
import { ensureBuilt, lines, records, runCommand, type RunningCommand, startCommand } from './support/processes.js';
import { get } from './support/http.js';
import { freePort } from './support/ports.js';
import { createPostgresSchema, postgresAvailable } from './services.js';
import { processEnv } from './support/env.js';
import { waitFor } from './support/wait.js';
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
      assert.ok(messages.includes('ready: 39,260 file rates, 5 years, newest 2026-03-05'), messages.join('\n'));
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
      'exrates listening on http://localhost:8080/ (bound to 0.0.0.0: every network interface); portal http://localhost:8080/, API docs http://localhost:8080/docs; store: PostgreSQL postgres://***@db:5432/exrates; providers: ecb, bancaditalia, nbu, nbp, cnb; loading rates…',
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

  test('the log and /readyz say what to do next', async () => {
    const port = await freePort();
    const server = startCommand(['serve'], { env: env({ PORT: String(port) }), cwd: dir.path });
    try {
      await waitFor(() => records(server.output()).some((r) => String(r.msg).startsWith('no rates loaded')), 20_000, 'the no-rates line', 100);
      const line = records(server.output()).find((r) => String(r.msg).startsWith('no rates loaded'))!;
      assert.equal(line.level, 50);
      assert.match(String(line.msg), /ECB failed: .*ECONNREFUSED/);
      assert.match(String(line.msg), /check that this machine can reach 127\.0\.0\.1:\d+/);
      assert.match(String(line.msg), advice);
      assert.ok(!server.output().includes('serving stored rates as stale'), 'nothing is stored, so nothing is served as stale');
      const ready = await get(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 503);
      const body = JSON.parse(ready.body) as { status: string; next?: string };
      assert.equal(body.status, 'no rates loaded');
      assert.match(body.next ?? '', advice);
    } finally {
      await stop(server);
    }
  });

  test('exrates refresh prints each failure once, and nothing about serving', async () => {
    const run = await runCommand(['refresh'], { env: env(), cwd: dir.path, timeoutMs: 30_000 });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, 'frankfurter: stored 0 rates over 0 days (newest day none)\n');
    const said = lines(run.stderr);
    assert.equal(said.length, 1, run.stderr);
    assert.match(said[0]!, /^ecb: failed: http:\/\/127\.0\.0\.1:\d+\/eurofxref-hist\.zip: fetch failed: ECONNREFUSED/);
    assert.doesNotMatch(run.stderr, /stale|serving/);
  });
});

test('EXRATES_LOG_FORMAT=auto is readable on a terminal and JSON anywhere else', async () => {
  const { resolveLogFormat } = await import('../src/log.js');
  assert.equal(resolveLogFormat('auto', { isTTY: true }), 'pretty');
  assert.equal(resolveLogFormat('auto', {}), 'json');
  assert.equal(resolveLogFormat('json', { isTTY: true }), 'json');
  assert.equal(resolveLogFormat('pretty', {}), 'pretty');
});
