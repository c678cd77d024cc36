/**
 * Writes the generated parts of docs/reliability.md: the figures of the newest run of
 * `npm run test:reliability -- --save` and of `npm run soak -- --save` (test/reliability/results/),
 * as the runner prints them; or with --check fails when the committed file differs from what they say.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillBlock, writeOrCheck } from './generated-file.js';
import { SAVED_RUNS_DIR, SAVED_SOAKS_DIR, type SavedRun, type SavedSoak } from '../test/reliability/harness.js';

const target = fileURLToPath(new URL('../docs/reliability.md', import.meta.url));
const REGENERATE = 'npm run docs:reliability';

function newest<T>(dir: string): { file: string; run: T } | undefined {
  const file = (existsSync(dir) ? readdirSync(dir) : []).filter((name) => name.endsWith('.json')).sort().at(-1);
  return file === undefined ? undefined : { file, run: JSON.parse(readFileSync(join(dir, file), 'utf8')) as T };
}

/** A table cell: pipes escaped, one line. */
const cell = (value: string | number) => String(value).replaceAll('|', '\\|').replaceAll('\n', ' ');

function where(run: Pick<SavedRun, 'startedAt' | 'commit' | 'uncommittedSrcChanges' | 'runtime' | 'machine'>): string {
  const changes = run.uncommittedSrcChanges > 0 ? ` + ${run.uncommittedSrcChanges} uncommitted change(s) in src/` : '';
  return `commit \`${run.commit}\`${changes}, ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC; Node.js ${run.runtime}, ${run.machine.cpus} CPUs (${run.machine.cpu}), ${run.machine.memoryGb} GB`;
}

function renderRun(): string {
  const saved = newest<SavedRun>(SAVED_RUNS_DIR);
  if (!saved) return 'No run is recorded in `test/reliability/results/`: `npm run test:reliability -- --save` records one.';
  const { file, run } = saved;
  const seconds = run.suites.map((suite) => `${suite.name} ${suite.seconds.toFixed(0)} s${suite.ok ? '' : ' (FAILED)'}`).join(', ');
  const parts = [`[JSON](../test/reliability/results/${file}). ${where(run)}. Suites: ${seconds}. \`npm audit\`: ${cell(run.audit)}.`];
  for (const result of run.results) {
    parts.push(
      `**${result.suite}** (${result.passed ? 'PASS' : 'FAIL'}, ${result.seconds.toFixed(0)} s): ${result.claim.replaceAll('\n', ' ')}`,
      ['| figure | value |', '| --- | --- |', ...result.figures.map(([label, value]) => `| ${cell(label)} | ${cell(value)} |`)].join('\n'),
      ...(result.notes ?? []).slice(0, 5).map((note) => `- ${note.slice(0, 300).replaceAll('\n', ' ')}`),
    );
  }
  return parts.join('\n\n');
}

function renderSoak(): string {
  const saved = newest<SavedSoak>(SAVED_SOAKS_DIR);
  if (!saved) return 'No soak is recorded in `test/reliability/results/soak/`: `npm run soak -- --save` records one.';
  const { file, run } = saved;
  return [
    `[JSON](../test/reliability/results/soak/${file}). ${where(run)}; ${run.duration} s at ${run.rate} requests/s over ${run.keys} keys.`,
    [
      '| period | requests | p50 ms | p99 ms | max ms | RSS MiB | statuses |',
      '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
      ...run.periods.map((p) => `| ${p.period} | ${p.requests} | ${p.p50.toFixed(2)} | ${p.p99.toFixed(2)} | ${p.max.toFixed(1)} | ${p.rss.toFixed(1)} | ${cell(p.statuses)} |`),
    ].join('\n'),
    run.checks.map((check) => `- ${check.ok ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail.replaceAll('\n', ' ')}`).join('\n'),
  ].join('\n\n');
}

const fill = (doc: string, name: string, content: string) => fillBlock(doc, 'docs/reliability.md', name, REGENERATE, content);
writeOrCheck(target, fill(fill(readFileSync(target, 'utf8'), 'latest-run', renderRun()), 'soak', renderSoak()), REGENERATE);
