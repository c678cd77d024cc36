import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { allocatorTrim, collectableBytes, fullCollection, keepMemory } from '../src/memory.js';

const MB = 1024 * 1024;

/** Polls until check() holds or the time is up; gives whether it held. */
async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

/** Buffers of `mb` megabytes in all, in history-body-sized pieces, dropped at once. */
function dropBuffers(mb: number): void {
  const held: Buffer[] = [];
  for (let i = 0; i < mb * 20; i++) held.push(Buffer.alloc(MB / 20, i));
  assert.equal(held.length, mb * 20);
}

test('the collector is had without --expose-gc, and a collection frees dropped Buffers', async () => {
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'this test runs without --expose-gc');
  const gc = fullCollection();
  assert.equal(typeof gc, 'function');
  gc!();
  const before = collectableBytes();
  dropBuffers(40);
  assert.ok(collectableBytes() >= before + 35 * MB, 'the dropped Buffers are counted until a collection');
  gc!();
  // External memory is released as V8 sweeps, just after the collection.
  assert.ok(await eventually(() => collectableBytes() < before + 10 * MB), `after a collection: ${collectableBytes() / MB} MB, before ${before / MB} MB`);
});

test('a collection is asked for once the old generation and Buffers grew by the budget', async () => {
  const keeper = keepMemory({ budgetBytes: 16 * MB, intervalMs: 20, maxTimeShare: 1 });
  assert.ok(keeper);
  try {
    const floor = keeper.floorBytes;
    dropBuffers(48);
    assert.ok(await eventually(() => keeper.collections >= 1), 'no collection was asked for');
    assert.ok(await eventually(() => collectableBytes() < floor + 16 * MB), `still ${(collectableBytes() - floor) / MB} MB over the floor`);
  } finally {
    keeper.stop();
  }
});

test('nothing is collected while the heap stays within the budget, nor more often than its share of the time allows', async () => {
  const idle = keepMemory({ budgetBytes: 256 * MB, intervalMs: 20, maxTimeShare: 1 });
  assert.ok(idle);
  try {
    dropBuffers(8);
    await sleep(300);
    assert.equal(idle.collections, 0);
  } finally {
    idle.stop();
  }
  const spaced = keepMemory({ budgetBytes: 4 * MB, intervalMs: 20, maxTimeShare: 1e-9 });
  assert.ok(spaced);
  try {
    dropBuffers(16);
    assert.ok(await eventually(() => spaced.collections === 1));
    dropBuffers(16);
    await sleep(300);
    assert.equal(spaced.collections, 1, 'a second collection came too soon after the first');
  } finally {
    spaced.stop();
  }
});

/** Whether this process's C library is glibc, whose malloc_trim the native module calls. */
function onGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return typeof report?.header?.glibcVersionRuntime === 'string';
}

test('on glibc, the native module is built and gives back the pages of freed Buffers that lie between live ones', { skip: !onGlibc() && 'the C library is not glibc' }, async () => {
  const trim = allocatorTrim();
  assert.ok(trim, 'build/Release/exrates_native.node is missing: npm install builds it (node-gyp)');
  const gc = fullCollection()!;
  gc();
  await sleep(100);
  trim();
  // Bodies of history size, one in eight kept: the freed ones are holes the heap cannot shrink past.
  const kept: Buffer[] = [];
  let dropped: Buffer[] = [];
  for (let i = 0; i < 1200; i++) (i % 8 === 0 ? kept : dropped).push(Buffer.alloc(50 * 1024, i));
  assert.equal(dropped.length, 1050);
  dropped = [];
  const before = collectableBytes();
  gc();
  assert.ok(await eventually(() => collectableBytes() < before - 40 * MB), 'the dropped Buffers were not freed');
  const held = process.memoryUsage().rss;
  assert.equal(trim(), true, 'malloc_trim gave nothing back');
  const after = process.memoryUsage().rss;
  assert.ok(held - after >= 30 * MB, `resident memory ${held / MB} MB before, ${after / MB} MB after`);
  assert.equal(kept.length, 150);
  assert.ok(kept.every((b, n) => b[0] === (n * 8) % 256 && b[b.length - 1] === (n * 8) % 256), 'a kept Buffer changed');
});

test('the keeper asks the C allocator for its free pages once after each collection', { skip: !onGlibc() && 'the C library is not glibc' }, async () => {
  const keeper = keepMemory({ budgetBytes: 16 * MB, intervalMs: 20, maxTimeShare: 1 });
  assert.ok(keeper);
  try {
    assert.equal(keeper.trims, 0);
    dropBuffers(48);
    assert.ok(await eventually(() => keeper.collections >= 1 && keeper.trims >= 1), `collections ${keeper.collections}, trims ${keeper.trims}`);
    await sleep(200);
    assert.equal(keeper.trims, keeper.collections, 'one trim per collection');
  } finally {
    keeper.stop();
  }
});
