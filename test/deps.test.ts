/**
 * How quotas are counted is decided by quotaMode alone, from the configuration, and
 * docs/operations.md's table ("Quota counts: which implementation, when") says the same.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { quotaMode } from '../src/deps.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('the quota mode follows EXRATES_REDIS_URL first, then EXRATES_WORKERS', () => {
  assert.equal(quotaMode({ redisUrl: undefined, workers: 1 }), 'process');
  assert.equal(quotaMode({ redisUrl: undefined, workers: 2 }), 'main-process');
  assert.equal(quotaMode({ redisUrl: 'redis://127.0.0.1:6379', workers: 1 }), 'redis');
  assert.equal(quotaMode({ redisUrl: 'redis://127.0.0.1:6379', workers: 4 }), 'redis');
});

test("docs/operations.md's table has one row per mode, each naming code that exists", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Quota counts: which implementation, when'), doc.indexOf('### The quota rule with Redis'));
  const rows = section
    .split('\n')
    .filter((line) => /^\| `[a-z-]+` \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  assert.deepEqual(
    rows.map((cells) => cells[1]),
    ['`process`', '`main-process`', '`redis`'],
  );
  for (const cells of rows) {
    const code = /^`([^`]+)`$/.exec(cells[3]!)?.[1];
    assert.ok(code && existsSync(join(ROOT, code)), `${cells[1]}: ${cells[3]}`);
  }
  // The "used when" column, read back: each row's configuration gives its mode.
  const configOf = (when: string) => ({ redisUrl: /`EXRATES_REDIS_URL` set/.test(when) ? 'redis://x' : undefined, workers: /`EXRATES_WORKERS` > 1/.test(when) ? 2 : 1 });
  for (const cells of rows) assert.equal(`\`${quotaMode(configOf(cells[2]!))}\``, cells[1], cells[2]);
});
