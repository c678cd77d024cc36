/**
 * `npm run bench:next-tick [-- --rounds 9]`: whether src/tick-shape.ts still pays on the runtime
 * that runs it. Nanoseconds per `process.nextTick` (the median of three loops of 2,000,000 calls)
 * in fresh node processes with `--expose-gc`, 5 rounds of each case alternating:
 *
 *   fresh       no collection asked for
 *   gc-at-start a full collection first, while no entry of the queue is alive (as at the service's start)
 *   held        the same, with holdTickShape() called before, as the service's start does
 *
 * Prints each case's median over the rounds and its ratio to `fresh`.
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { holdTickShape } from '../src/tick-shape.js';
import { median } from './report.js';

const CASES = ['fresh', 'gc-at-start', 'held'] as const;
const CALLS = 2_000_000;

const loop = () =>
  new Promise<number>((resolve) => {
    let left = CALLS;
    const started = process.hrtime.bigint();
    const next = () => (--left > 0 ? process.nextTick(next) : resolve(Number(process.hrtime.bigint() - started) / CALLS));
    process.nextTick(next);
  });

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, child: { type: 'string' } } });
if (flags.child) {
  if (flags.child === 'held') await holdTickShape();
  if (flags.child !== 'fresh') {
    // Entries seen by the interpreter, then none alive while V8 collects.
    for (let i = 0; i < 100; i++) process.nextTick(() => undefined);
    await sleep(10);
    (globalThis as unknown as { gc(): void }).gc();
    await sleep(10);
  }
  process.stdout.write(`${median([await loop(), await loop(), await loop()])}\n`);
} else {
  const rounds = Number(flags.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, not ${flags.rounds}`);
  console.log(`next-tick — node ${process.version}, ${rounds} rounds, ns per nextTick`);
  const results = new Map<string, number[]>(CASES.map((which) => [which, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const which of CASES) results.get(which)!.push(Number(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--child', which], { encoding: 'utf8' })));
    console.log(`round ${round}: ${CASES.map((which) => `${which} ${results.get(which)!.at(-1)!.toFixed(1)}`).join(', ')}`);
  }
  const fresh = median(results.get('fresh')!);
  for (const which of CASES) console.log(`${which.padEnd(12)} median ${median(results.get(which)!).toFixed(1)} ns  × fresh ${(median(results.get(which)!) / fresh).toFixed(2)}`);
}
