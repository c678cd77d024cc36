import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FeedError } from '../../src/core/errors.js';
import { createGate, dayFromDotted, perUnit, spansOf } from '../../src/providers/paced.js';

test('a gate lets at most its limit of calls run at once, the others in arrival order', async () => {
  const gate = createGate(2);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  // Each call runs until the test ends it.
  const ends: Array<() => void> = [];
  const calls = Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      gate(async () => {
        started.push(i);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => ends.push(resolve));
        running -= 1;
      }),
    ),
  );
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  await settle();
  assert.deepEqual(started, [0, 1], 'two run, three wait');
  for (let ended = 0; ended < 5; ended += 1) {
    ends[ended]!();
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3, 4].slice(0, Math.min(5, ended + 3)), `after ${ended + 1} ended`);
  }
  await calls;
  assert.equal(most, 2);
  // A failing call frees its place.
  await assert.rejects(gate(async () => Promise.reject(new Error('x'))));
  assert.equal(await gate(async () => 7), 7);
});

test('per-unit rates move the published decimal point for 10, 100, 1,000 and are exact quotients otherwise', () => {
  assert.equal(perUnit('13.9116', '10', 'F', 'w'), '1.39116');
  assert.equal(perUnit('1.6565', '1000', 'F', 'w'), '0.0016565');
  assert.equal(perUnit('24.170', '100', 'F', 'w'), '0.24170');
  assert.equal(perUnit('6', '100', 'F', 'w'), '0.06');
  assert.equal(perUnit('43.2081', '1', 'F', 'w'), '43.2081');
  assert.equal(perUnit('1.5', '4', 'F', 'w'), '0.375');
  assert.throws(() => perUnit('1', '3', 'F', 'w'), FeedError);
  assert.throws(() => perUnit('1', '0', 'F', 'w'), FeedError);
  assert.throws(() => perUnit('1e3', '1', 'F', 'w'), FeedError);
});

test('a range is cut into spans of at most the given days; DD.MM.YYYY dates are read strictly', () => {
  assert.deepEqual(spansOf({ from: '2026-01-01', to: '2026-01-10' }, 4), [
    { from: '2026-01-01', to: '2026-01-04' },
    { from: '2026-01-05', to: '2026-01-08' },
    { from: '2026-01-09', to: '2026-01-10' },
  ]);
  assert.deepEqual(spansOf({ from: '2026-01-01', to: '2026-01-01' }, 366), [{ from: '2026-01-01', to: '2026-01-01' }]);
  assert.equal(dayFromDotted('01.03.2026'), '2026-03-01');
  assert.equal(dayFromDotted('29.02.2026'), undefined);
  assert.equal(dayFromDotted('1.3.2026'), undefined);
});
