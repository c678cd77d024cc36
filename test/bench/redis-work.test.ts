import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { readRedisInfo, redisWatcher } from '../../bench/servers.js';
import { REDIS_URL, redisAvailable } from '../support/stores.js';

test('the Redis INFO reading sums script calls (EVALSHA and EVAL) apart from other commands, leaves INFO out, and adds user and system CPU', () => {
  const text = [
    '# CPU',
    'used_cpu_sys:1.250000',
    'used_cpu_user:2.500000',
    'used_cpu_sys_children:9.000000',
    '# Commandstats',
    'cmdstat_evalsha:calls=40,usec=2000,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
    'cmdstat_eval:calls=2,usec=300,usec_per_call=150.00,rejected_calls=0,failed_calls=0',
    'cmdstat_get:calls=7,usec=14,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
    'cmdstat_info:calls=99,usec=9999,usec_per_call=101.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n');
  assert.deepEqual(readRedisInfo(text), { cpuSeconds: 3.75, commands: 49, scriptCalls: 42, scriptUsec: 2300 });
  assert.throws(() => readRedisInfo('# Commandstats\r\n'), /used_cpu/);
});

test('the watcher sees a real Redis count the script calls made between two readings', async (t) => {
  if (!(await redisAvailable())) return t.skip('Redis not available');
  const watcher = await redisWatcher(REDIS_URL);
  const client = new Redis(REDIS_URL);
  const key = `exrates-test-${randomUUID()}`;
  try {
    const before = await watcher.read();
    for (let i = 0; i < 25; i++) await client.eval("return redis.call('INCR', KEYS[1])", 1, key);
    const after = await watcher.read();
    // Other suites may share this Redis: at least ours are counted.
    assert.ok(after.scriptCalls - before.scriptCalls >= 25, `script calls ${after.scriptCalls - before.scriptCalls}`);
    assert.ok(after.scriptUsec > before.scriptUsec);
    assert.ok(after.commands - before.commands >= 25);
    assert.ok(after.cpuSeconds >= before.cpuSeconds);
  } finally {
    await client.del(key);
    client.disconnect();
    watcher.close();
  }
});
