/**
 * What a full collection at start does to `process.nextTick`, which Node's streams call several
 * times per request, and what `holdTickShape` (src/tick-shape.ts) keeps of it: the measurement
 * that says whether src/tick-shape.ts still pays, on the runtime that runs it. Each case runs in
 * a fresh node process with `--expose-gc`:
 *
 *   fresh       nextTick in a loop, no collection asked for
 *   gc-at-start a few nextTick calls, then a full collection while no entry of the queue is
 *               alive (as at the service's start), then the loop
 *   held        the same, with holdTickShape() called first, as the service's start does
 *
 *   npm run bench:next-tick                  # 5 rounds of each case, alternating
 *   npm run bench:next-tick -- --rounds 9
 *
 * Prints nanoseconds per nextTick (the median of three loops of 2,000,000 calls in each process)
 * and each case's median over the rounds as a ratio to `fresh` measured in the same run.
 */
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { holdTickShape } from '../src/tick-shape.js';

const CASES = ['fresh', 'gc-at-start', 'held'] as const;
type Case = (typeof CASES)[number];
const CALLS = 2_000_000;

function loop(): Promise<number> {
  return new Promise((resolve) => {
    let left = CALLS;
    const started = process.hrtime.bigint();
    function next(): void {
      if (--left > 0) process.nextTick(next);
      else resolve(Number(process.hrtime.bigint() - started) / CALLS);
    }
    process.nextTick(next);
  });
}

async function child(which: Case): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  if (which === 'held') await holdTickShape();
  if (which !== 'fresh') {
    // Entries seen by the interpreter, then none alive while V8 collects.
    for (let i = 0; i < 100; i++) process.nextTick(() => undefined);
    await sleep(10);
    gc();
    await sleep(10);
  }
  process.stdout.write(`${median([await loop(), await loop(), await loop()])}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const { values: flags } = parseArgs({ options: { rounds: { type: 'string' }, child: { type: 'string' } } });
  if (flags.child) return child(flags.child as Case);
  const rounds = Number(flags.rounds ?? 5);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, not ${flags.rounds}`);
  console.log(`next-tick bench — node ${process.version}, ${rounds} rounds, ${CALLS.toLocaleString('en')} calls × 3 per process, ns per nextTick`);
  const results = new Map<Case, number[]>(CASES.map((which) => [which, []]));
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    for (const which of CASES) {
      const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--child', which], { encoding: 'utf8' });
      const ns = Number(output.trim());
      results.get(which)!.push(ns);
      line.push(`${which} ${ns.toFixed(1)}`);
    }
    console.log(`round ${round}: ${line.join(', ')}`);
  }
  const fresh = median(results.get('fresh')!);
  for (const which of CASES) {
    const value = median(results.get(which)!);
    console.log(`${which.padEnd(12)} median ${value.toFixed(1)} ns  × fresh ${(value / fresh).toFixed(2)}`);
  }
}

await main();
