/**
 * Starts that cannot succeed: the real `exrates` process must say why in one line and exit 1,
 * never hang with timers and reconnecting clients left behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ensureBuilt, freePort } from './scale/cluster.js';
import { createPostgresSchema, postgresAvailable } from './services.js';
import { cleanEnv, lines, runCli } from './support/cli.js';
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
    env = cleanEnv({
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
      const run = await runCli(command, { env, cwd: dir.path, timeoutMs: 15_000 });
      assert.equal(run.timedOut, false, `still running after 15 s:\n${run.stdout}${run.stderr}`);
      assert.equal(run.code, 1);
      const said = [...lines(run.stdout), ...lines(run.stderr)];
      assert.equal(said.length, 1, `expected one line, got:\n${said.join('\n')}`);
      assert.match(said[0]!, /^exrates: cannot connect to Redis at redis:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    });
  }
});
