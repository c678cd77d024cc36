/**
 * Writes the generated parts of docs/performance.md: the targets (from bench/targets.ts) and the
 * latest results (the newest run of each runtime in bench/results/, rendered as the bench prints
 * it); or with --check fails when the committed file differs from what they say.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillBlock, writeOrCheck } from './generated-file.js';
import { INSTRUCTIONS_DIR, type InstructionRun } from '../bench/instruction-report.js';
import { DEEP_HISTORY_DIR, PLAIN_VARIANT, RESULTS_DIR, renderRun, type Run } from '../bench/report.js';
import { COLD_START_MS, PEAK_RSS_MB, SCENARIO_TARGETS, TARGET_CONNECTIONS, targetText } from '../bench/targets.js';

const target = fileURLToPath(new URL('../docs/performance.md', import.meta.url));

function renderTargets(): string {
  return [
    '| what | target |',
    '| --- | --- |',
    ...Object.entries(SCENARIO_TARGETS).map(([name, t]) =>
      t.versus === 'rate'
        ? `| \`${name}\` (\`--database-url\`, \`--redis-url\`), ${TARGET_CONNECTIONS} connections | its ratio to baseline+headers ≥ ${t.minRatio.toFixed(2)} × the SQLite \`rate\` row's; ≤ ${t.maxRedisCommandsPerRequest} Redis commands per request |`
        : `| \`${name}\`, ${TARGET_CONNECTIONS} connections | requests/s ${targetText(t)} |`,
    ),
    `| peak RSS of the service (VmHWM), full ECB history stored, 1,000 keys, no node flag but an operator's heap sizes | ≤ ${PEAK_RSS_MB} MB |`,
    `| cold start: spawn → first 200 of \`/api/v1/rate\`, full history stored (median of 3) | ≤ ${(COLD_START_MS / 1000).toFixed(1)} s |`,
  ].join('\n');
}

/** The newest run of each Node.js major line in `dir`, the newest line first (file names start with the run's UTC time). */
function newestRuns<R extends { runtime: string } = Run>(dir = RESULTS_DIR): Array<{ file: string; run: R }> {
  const byLine = new Map<number, { file: string; run: R }>();
  for (const file of (existsSync(dir) ? readdirSync(dir) : []).filter((name) => name.endsWith('.json')).sort()) {
    const run = JSON.parse(readFileSync(join(dir, file), 'utf8')) as R;
    byLine.set(Number(/^v(\d+)/.exec(run.runtime)?.[1]), { file, run });
  }
  return [...byLine.entries()].sort(([a], [b]) => b - a).map(([, newest]) => newest);
}

/** The newest run whose service kept every year (bench/results/deep-history/), with its stores after the first load. */
function renderDeepHistory(): string {
  const files = (existsSync(DEEP_HISTORY_DIR) ? readdirSync(DEEP_HISTORY_DIR) : []).filter((name) => name.endsWith('.json')).sort();
  const file = files.at(-1);
  if (file === undefined) return 'No run is recorded in `bench/results/deep-history/`.';
  const run = JSON.parse(readFileSync(join(DEEP_HISTORY_DIR, file), 'utf8')) as Run;
  return `[JSON](../bench/results/deep-history/${file}). ${renderRun(run)}`.trimEnd();
}

function renderResults(): string {
  const runs = newestRuns();
  if (runs.length === 0) return 'No run is recorded in `bench/results/`.';
  return runs.map(({ file, run }) => `### Node.js ${run.runtime.slice(1).split('.')[0]}\n\n[JSON](../bench/results/${file}). ${renderRun(run)}`.trimEnd()).join('\n\n');
}

/**
 * What src/workarounds.ts buys, from each runtime's newest instruction count
 * (bench/results/instructions/, `npm run bench:instructions`): each row with the workarounds and
 * its `@plain` twin without, in instructions per request (the request path's, and all threads').
 */
function renderWorkarounds(): string {
  const rows = newestRuns<InstructionRun>(INSTRUCTIONS_DIR).flatMap(({ file, run }) =>
    run.rows.flatMap((applied) => {
      const plain = run.rows.find((row) => row.name === `${applied.name}${PLAIN_VARIANT}`);
      if (applied.server !== 'service' || plain === undefined) return [];
      // The request path's count: the main thread's without timers and immediates, or, in a run recorded before that figure, the whole main thread's.
      const key = applied.perRequest.untimed !== undefined && plain.perRequest.untimed !== undefined ? 'untimed' : 'main';
      const bought = (of: 'untimed' | 'main' | 'all') => `${((1 - applied.perRequest[of]! / plain.perRequest[of]!) * 100).toFixed(1)} %`;
      const ratios = applied.ratioToHeaders !== undefined && plain.ratioToHeaders !== undefined ? `${applied.ratioToHeaders.toFixed(3)} / ${plain.ratioToHeaders.toFixed(3)}` : '–';
      const count = (value: number) => `${value.toLocaleString('en-US')}${key === 'main' ? ' (whole main thread)' : ''}`;
      return [
        `| ${run.runtime}, \`${run.commit}\`${run.uncommittedSrcChanges ? ` + ${run.uncommittedSrcChanges} files changed in src/` : ''} ([run](../bench/results/instructions/${file})) | \`${applied.name}\` | ${count(applied.perRequest[key]!)} | ${count(plain.perRequest[key]!)} | **${bought(key)}** | ${bought('all')} | ${ratios} |`,
      ];
    }),
  );
  if (rows.length === 0) return 'No instruction count is recorded in `bench/results/instructions/`.';
  return [
    '| runtime, build | row | instructions/request, request path | without the workarounds | bought | bought, all threads | × baseline+headers, with / without |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

const fill = (doc: string, name: string, content: string) => fillBlock(doc, 'docs/performance.md', name, 'npm run docs:performance', content);

const current = readFileSync(target, 'utf8');
writeOrCheck(
  target,
  fill(fill(fill(fill(current, 'targets', renderTargets()), 'results', renderResults()), 'workarounds', renderWorkarounds()), 'deep-history', renderDeepHistory()),
  'npm run docs:performance',
);
