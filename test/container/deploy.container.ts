/**
 * The deployment files, checked by the tools that read them, without pulling any image:
 * deploy/haproxy.cfg by Debian's `haproxy -c`, compose.yaml by `docker-compose config` (Debian's
 * docker-compose 1.29, which resolves variables, env files and the services' dependencies the way
 * `docker compose` does), and deploy/exrates.env by the service itself. On CI the tools are
 * installed with apt-get; elsewhere a missing tool skips its check with a visible line.
 *
 * What these cannot show: compose.yaml actually started (its postgres, redis and haproxy images
 * cannot be pulled here). The image it builds is the one image.container.ts runs.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { ensureBuilt, lines, ROOT, runCommand } from '../support/processes.js';
import { tempDir } from '../support/stores.js';
import { run, tool } from './engine.js';

const folder = tempDir('exrates-deploy-');
after(() => folder.remove());

test('deploy/haproxy.cfg is valid for haproxy -c, its error pages found beside it', async (t) => {
  const missing = await tool('haproxy', 'haproxy');
  if (missing) return t.skip(missing);
  const result = await run('haproxy', ['-c', '-f', 'deploy/haproxy.cfg']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /Configuration file is valid/);
  // The only warnings: the instances' names, which resolve on compose's network only.
  const warnings = result.stderr.split('\n').filter((line) => line.includes('[WARNING]'));
  for (const warning of warnings) assert.match(warning, /could not resolve address 'exrates-[12]'/, warning);
});

describe('compose.yaml, as docker-compose config resolves it', () => {
  interface Service {
    build?: unknown;
    image?: string;
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
  }

  /**
   * `docker-compose config` run in a copy of the files compose.yaml names (one folder, so that
   * resolved paths compare equal), with `dotEnv` as the .env beside it. docker-compose 1.29
   * predates the top-level `name` key, the one line taken out of the copy.
   */
  async function resolved(env: Record<string, string>, dotEnv?: string): Promise<{ code: number | null; services: Record<string, Service>; stderr: string }> {
    const dir = join(folder.path, 'compose');
    mkdirSync(dir, { recursive: true });
    const text = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    assert.match(text, /^name: exrates$/m);
    writeFileSync(join(dir, 'compose.yaml'), text.replace(/^name: exrates$/m, ''));
    cpSync(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true });
    rmSync(join(dir, '.env'), { force: true });
    if (dotEnv !== undefined) writeFileSync(join(dir, '.env'), dotEnv);
    const result = await run('env', ['-i', `PATH=${process.env.PATH}`, ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'docker-compose', 'config'], { cwd: dir });
    const services = result.code === 0 ? (parse(result.stdout) as { services: Record<string, Service> }).services : {};
    return { code: result.code, services, stderr: result.stderr };
  }

  let missing = '';
  test('refuses to resolve without POSTGRES_PASSWORD, instead of defaulting to a known one', async (t) => {
    missing = await tool('docker-compose', 'docker-compose');
    if (missing) return t.skip(missing);
    const result = await resolved({});
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /set POSTGRES_PASSWORD/);
  });

  test("the instances' settings come from deploy/exrates.env: the .env of the offline quick start changes nothing", async (t) => {
    if (missing) return t.skip(missing);
    const plain = await resolved({ POSTGRES_PASSWORD: 'a-long-secret' });
    assert.equal(plain.code, 0, plain.stderr);
    // The README's offline quick start writes this .env.
    const quickStart = await resolved({ POSTGRES_PASSWORD: 'a-long-secret' }, 'EXRATES_PROVIDERS=file\nEXRATES_FILE_URL=../shared/data/ecb/eurofxref-hist.csv\nEXRATES_NOW=2026-03-06T12:00:00Z\n');
    assert.equal(quickStart.code, 0, quickStart.stderr);
    assert.deepEqual(quickStart.services, plain.services);
    for (const name of ['migrate', 'exrates-1', 'exrates-2']) {
      const environment = plain.services[name]!.environment!;
      assert.equal(environment.EXRATES_PROVIDERS, 'ecb,frankfurter', name);
      assert.equal(environment.EXRATES_DATABASE_URL, 'postgres://exrates:a-long-secret@postgres:5432/exrates', name);
      assert.equal(environment.EXRATES_REDIS_URL, 'redis://redis:6379', name);
      assert.equal(environment.EXRATES_FILE_URL, undefined, name);
    }
    // A password in .env beside compose.yaml works as documented.
    const fromDotEnv = await resolved({}, 'POSTGRES_PASSWORD=a-long-secret\n');
    assert.deepEqual(fromDotEnv.services, plain.services);
  });

  test('one service builds the image, the others run it; instances start after the migration and healthy stores, HAProxy after them', async (t) => {
    if (missing) return t.skip(missing);
    const { services } = await resolved({ POSTGRES_PASSWORD: 'a-long-secret' });
    const builders = Object.entries(services).filter(([, service]) => service.build !== undefined).map(([name]) => name);
    assert.deepEqual(builders, ['migrate']);
    const image = services.migrate!.image;
    assert.deepEqual(
      Object.entries(services).filter(([, service]) => service.image === image).map(([name]) => name).sort(),
      ['exrates-1', 'exrates-2', 'migrate'],
    );
    for (const store of ['postgres', 'redis']) assert.ok(services[store]!.healthcheck?.test.length, `${store} has a health check`);
    assert.deepEqual(services.migrate!.depends_on, { postgres: { condition: 'service_healthy' } });
    for (const name of ['exrates-1', 'exrates-2']) {
      assert.deepEqual(services[name]!.depends_on, {
        migrate: { condition: 'service_completed_successfully' },
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    }
    assert.deepEqual(Object.keys(services.lb!.depends_on ?? {}).sort(), ['exrates-1', 'exrates-2']);
  });

  test("deploy/exrates.env holds settings the service accepts, without a warning", async (t) => {
    if (missing) return t.skip(missing);
    const { services } = await resolved({ POSTGRES_PASSWORD: 'a-long-secret' });
    await ensureBuilt();
    const store = join(folder.path, 'env-check.db');
    // The instances' environment as compose resolves it, on a SQLite file instead of the compose network's stores.
    const { EXRATES_DATABASE_URL: _database, EXRATES_REDIS_URL: _redis, ...settings } = services['exrates-1']!.environment!;
    const result = await runCommand(['migrate'], { env: { PATH: process.env.PATH, ...settings, EXRATES_DATABASE_URL: `sqlite:${store}`, EXRATES_LOG_LEVEL: 'warn' }, cwd: folder.path });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(lines(result.stderr), []);
  });
});
