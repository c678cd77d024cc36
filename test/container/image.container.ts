/**
 * The image, built and run as an operator would (README, Containers; docs/operations.md): built
 * once from the stand-in base, then started offline on a volume, given a key by a second
 * container, stopped, removed and started again, and run twice on the host network against the
 * PostgreSQL and Redis the suite uses. Run with `npm run test:container` (not part of `npm test`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXED_NOW, SHARED_DATA } from '../support/data.js';
import { freePort } from '../support/ports.js';
import { ROOT } from '../support/processes.js';
import { createPostgresSchema, deleteRedisKeys, missingEngines, REDIS_URL } from '../support/stores.js';
import { Created, buildImage, docker, dockerOk, fetchWithin, prepareEngine, waitFor } from './engine.js';

/** EUR→USD on the last day of the shared ECB history, as the README's example answers it. */
const EUR_USD = { rate: '1.1618', asOf: '2026-03-05T15:00:00Z' };
/** The image's HEALTHCHECK: first run after its 30 s interval, three failures to turn unhealthy. */
const HEALTHY_WITHIN_MS = 120_000;
const GRACE_SECONDS = 30;

/** The commands of the README's Containers block, one word list each (they hold no quotes). */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const found = /<!-- containers -->\n```sh\n([\s\S]*?)\n```/.exec(readme);
  assert.ok(found, 'README.md has no block marked containers');
  assert.doesNotMatch(found[1]!, /["'$\\]/);
  return found[1]!.split('\n').map((line) => line.trim().split(/\s+/));
}

const created = new Created();
const tag = created.tag(`exrates:check-${created.id}`);
const volume = created.volume(created.name('data'));
let skip = '';

/**
 * A README command as the test runs it: this run's tag, container and volume names, a free
 * loopback port, `--network host` for the build (the npm registry is reached through the host
 * here), and the offline settings and the mounted ECB file before the image.
 */
function adapt(words: readonly string[], names: { container?: string; port?: number } = {}): string[] {
  assert.equal(words[0], 'docker');
  const command = words[1];
  const out: string[] = [];
  for (const [i, word] of words.entries()) {
    if (i === 0) continue;
    const previous = words[i - 1];
    if (previous === '--name' || (command === 'stop' && i === words.length - 1)) out.push(names.container!);
    else if (command === 'build' && previous === '-t') out.push(tag);
    else if (previous === '-p') out.push(`127.0.0.1:${names.port}:${word.split(':').at(-1)}`);
    else if (previous === '-v' && word.startsWith('exrates-data:')) out.push(word.replace('exrates-data', volume));
    else if (command === 'run' && word === 'exrates') out.push(...ecbMount, ...offline, tag);
    else out.push(word);
    if (i === 1 && command === 'build') out.push('--network', 'host');
  }
  return out;
}

const readme = {
  build: () => readmeCommands().find((words) => words[1] === 'build')!,
  serve: () => readmeCommands().find((words) => words[1] === 'run' && words.includes('-d'))!,
  keys: () => readmeCommands().find((words) => words[1] === 'run' && words.includes('keys'))!,
  stop: () => readmeCommands().find((words) => words[1] === 'stop')!,
};

/** The offline quick start's settings (README), with the shared ECB file mounted read-only at /ecb. */
const offline = ['-e', 'EXRATES_PROVIDERS=file', '-e', 'EXRATES_FILE_URL=/ecb/eurofxref-hist.csv', '-e', `EXRATES_NOW=${FIXED_NOW}`];
const ecbMount = ['-v', `${join(SHARED_DATA, 'ecb')}:/ecb:ro`];

async function logs(name: string): Promise<string> {
  const result = await docker(['logs', '--tail', '40', name]);
  return `${result.stdout}${result.stderr}`;
}

/** Waits for /readyz to answer 200; on a timeout the container's last log lines are in the error. */
async function ready(name: string, base: string): Promise<void> {
  try {
    await waitFor(`${name} ready`, async () => ((await fetchWithin(`${base}/readyz`, {}, 2000)).status === 200 ? true : undefined), 90_000);
  } catch (error) {
    throw new Error(`${String(error)}\n${await logs(name)}`);
  }
}

async function getJson(url: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetchWithin(url, { headers: { 'X-Api-Key': key } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function keysCreate(env: string[], network: string[]): Promise<string> {
  const key = await dockerOk(['run', '--rm', ...network, ...env, tag, 'keys', 'create', '--tier', 'free', '--owner', 'ops@example.com']);
  assert.match(key, /^exr_[A-Za-z0-9_-]+$/);
  return key;
}

before(async () => {
  const started = performance.now();
  skip = await prepareEngine();
  if (skip) return;
  const base = (performance.now() - started) / 1000;
  const built = await buildImage(adapt(readme.build()), tag);
  const mb = (built.bytes / 1e6).toFixed(0);
  console.log(`# image ${tag}: ${mb} MB (${built.bytes} bytes); the stand-in base in ${base.toFixed(0)} s, the image in ${built.seconds.toFixed(0)} s`);
});

after(async () => {
  if (!skip) await created.cleanUp();
});

describe('the image', () => {
  test('holds the service and nothing it never loads: no sources, tests, docs, TypeScript files, source maps or other platforms\' binaries', async (t) => {
    if (skip) return t.skip(skip);
    const listing = await dockerOk(['run', '--rm', '--entrypoint', 'sh', tag, '-c', 'ls -A /app; echo --; find /app/node_modules /app/dist -type f \\( -name "*.ts" -o -name "*.mts" -o -name "*.cts" -o -name "*.md" -o -name "*.map" \\) | head -5; echo --; ls /app/node_modules/better-sqlite3/prebuilds']);
    const [top, leftovers, prebuilds] = listing.split('--\n').map((part) => part.trim().split('\n').filter(Boolean));
    assert.deepEqual(top!.sort(), ['compile-cache', 'dist', 'node_modules', 'package.json']);
    assert.deepEqual(leftovers, []);
    assert.deepEqual(prebuilds, ['linux-x64.node']);
  });

  describe('offline, on a volume, with the README\'s commands', () => {
    const first = created.container(created.name('first'));
    const second = created.container(created.name('second'));
    let base = '';
    let key = '';

    test('starts with the ECB file mounted read-only, /readyz turns 200 and /rate answers the file\'s rate', async (t) => {
      if (skip) return t.skip(skip);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      await dockerOk(adapt(readme.serve(), { container: first, port }));
      await ready(first, base);
      // Without a key: refused, naming the contact address given to the container.
      const refused = await fetchWithin(`${base}/api/v1/rate?from=EUR&to=USD`);
      assert.equal(refused.status, 401);
      assert.match(await refused.text(), /keys@example\.com/);
    });

    test('`keys create` in a second container on the same volume issues a key the server accepts, and counts it', async (t) => {
      if (skip) return t.skip(skip);
      key = await dockerOk(adapt(readme.keys()));
      assert.match(key, /^exr_[A-Za-z0-9_-]+$/);
      for (let i = 0; i < 3; i += 1) {
        const answer = await getJson(`${base}/api/v1/rate?from=EUR&to=USD`, key);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.deepEqual([answer.body.rate, answer.body.asOf], [EUR_USD.rate, EUR_USD.asOf]);
      }
      const usage = await getJson(`${base}/api/v1/usage`, key);
      assert.equal(usage.status, 200);
      assert.equal(usage.body.used, 3, JSON.stringify(usage.body));
    });

    test('runs as uid 1000, and only /data and the compile cache are writable by it (besides the system\'s scratch folders)', async (t) => {
      if (skip) return t.skip(skip);
      const status = await dockerOk(['exec', first, 'cat', '/proc/1/status']);
      assert.match(status, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
      const writable = (await dockerOk(['exec', first, 'sh', '-c', 'find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -writable -print 2>/dev/null; true'], 120_000))
        .split('\n')
        .filter(Boolean);
      const scratch = ['/tmp', '/var/tmp', '/run/lock', '/var/lock', '/home/node'];
      const outside = writable.filter((path) => ![...scratch, '/data', '/app/compile-cache'].some((root) => path === root || path.startsWith(`${root}/`)));
      assert.deepEqual(outside, [], `writable beyond /data and the compile cache: ${outside.slice(0, 20).join(' ')}`);
      assert.ok(writable.includes('/data') && writable.includes('/app/compile-cache'), writable.join(' '));
      // And as a write: the application files are read-only to the service.
      const write = await docker(['exec', first, 'sh', '-c', 'touch /app/dist/cli/x 2>&1; touch /app/node_modules/x 2>&1; touch /data/x && rm /data/x && echo data-ok']);
      assert.match(write.stdout, /Permission denied[\s\S]*Permission denied[\s\S]*data-ok/);
    });

    test('the HEALTHCHECK turns healthy', async (t) => {
      if (skip) return t.skip(skip);
      const status = await waitFor(
        'healthy',
        async () => {
          const health = await dockerOk(['inspect', '--format', '{{.State.Health.Status}}', first]);
          assert.notEqual(health, 'unhealthy');
          return health === 'healthy' ? health : undefined;
        },
        HEALTHY_WITHIN_MS,
        1000,
      );
      assert.equal(status, 'healthy');
    });

    test(`\`docker stop\` reaches the service as PID 1, which drains and exits 0 within the ${GRACE_SECONDS} s grace period`, async (t) => {
      if (skip) return t.skip(skip);
      const words = readme.stop();
      assert.equal(words[words.indexOf('-t') + 1], String(GRACE_SECONDS));
      const stop = await docker(adapt(words, { container: first }), (GRACE_SECONDS + 30) * 1000);
      assert.equal(stop.code, 0, stop.stderr);
      assert.ok(stop.ms < GRACE_SECONDS * 1000, `docker stop took ${stop.ms} ms`);
      const state = JSON.parse(await dockerOk(['inspect', '--format', '{{json .State}}', first])) as { ExitCode: number; OOMKilled: boolean };
      assert.equal(state.ExitCode, 0);
      assert.match(await logs(first), /shutting down: draining in-flight requests/);
    });

    test('removed and started again on the volume, the key and its count are still there', async (t) => {
      if (skip) return t.skip(skip);
      await dockerOk(['rm', first]);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      await dockerOk(adapt(readme.serve(), { container: second, port }));
      await ready(second, base);
      assert.equal((await getJson(`${base}/api/v1/usage`, key)).body.used, 3);
      assert.equal((await getJson(`${base}/api/v1/rate?from=EUR&to=USD`, key)).status, 200);
      assert.equal((await getJson(`${base}/api/v1/usage`, key)).body.used, 4);
    });
  });

  test('a bad setting stops it at once with exit code 1 and the configuration error alone (no stack trace)', async (t) => {
    if (skip) return t.skip(skip);
    const result = await docker(['run', '--rm', '-e', 'EXRATES_QUOTA_FREE=zero', tag], 60_000);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    // The service's configuration error: one line for the one bad setting.
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    assert.deepEqual(lines, ["exrates: invalid configuration: EXRATES_QUOTA_FREE: expected a whole number of at least 1; got 'zero'"]);
  });

  describe('two containers on the host network sharing PostgreSQL and Redis', () => {
    const names = [created.container(created.name('pg-1')), created.container(created.name('pg-2'))];
    const prefix = `exrates-check-${created.id}:`;
    let dropSchema: (() => Promise<void>) | undefined;

    after(async () => {
      await dropSchema?.();
      if (!skip) await deleteRedisKeys(`${prefix}*`).catch(() => undefined);
    });

    test("keep a key's quota exact across them", async (t) => {
      if (skip) return t.skip(skip);
      const missing = await missingEngines();
      if (missing) return t.skip(missing);
      const schema = await createPostgresSchema();
      dropSchema = schema.drop;
      const limit = 12;
      const env = [
        ...['-e', `EXRATES_DATABASE_URL=${schema.url}`, '-e', `EXRATES_REDIS_URL=${REDIS_URL}`, '-e', `EXRATES_REDIS_PREFIX=${prefix}`],
        ...['-e', `EXRATES_QUOTA_FREE=${limit}`, ...offline],
      ];
      const ports = [await freePort(), await freePort()];
      const bases = ports.map((port) => `http://127.0.0.1:${port}`);
      for (const [i, name] of names.entries()) {
        await dockerOk(['run', '-d', '--name', name, '--network', 'host', '-e', `PORT=${ports[i]}`, '-e', 'HOST=127.0.0.1', ...ecbMount, ...env, tag]);
      }
      for (const [i, name] of names.entries()) await ready(name, bases[i]!);
      const key = await keysCreate(env, ['--network', 'host']);
      // A burst over the limit, alternating between the two, all at once.
      const statuses = await Promise.all(
        Array.from({ length: limit + 8 }, async (_, i) => (await fetchWithin(`${bases[i % 2]}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key } })).status),
      );
      assert.deepEqual(
        [statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length],
        [limit, 8],
        statuses.join(' '),
      );
      for (const base of bases) assert.equal((await getJson(`${base}/api/v1/usage`, key)).body.used, limit);
    });
  });
});
