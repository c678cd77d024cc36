/**
 * Shared by the reliability suites: where their figures and logs go, a problem+json checker, and
 * snapshots of the store.
 *
 * Each suite writes one JSON result into test-artifacts/reliability/results/; `run.ts` prints them
 * as one table. Every server a suite starts has its whole output saved under logs/, and every key
 * a suite issues is listed under keys/, so the runner can scan the logs of the whole run for keys.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ERROR_CODES } from '../../src/core/errors.js';
import { ROOT, type ServeProcess } from '../support/processes.js';

export const ARTIFACTS = join(ROOT, 'test-artifacts', 'reliability');
export const RESULTS_DIR = join(ARTIFACTS, 'results');
export const LOGS_DIR = join(ARTIFACTS, 'logs');
export const KEYS_DIR = join(ARTIFACTS, 'keys');
/** Runs saved with --save (committed): docs/reliability.md is generated from the newest (npm run docs:reliability). */
export const SAVED_RUNS_DIR = join(ROOT, 'test', 'reliability', 'results');
export const SAVED_SOAKS_DIR = join(SAVED_RUNS_DIR, 'soak');

/** A run of `npm run test:reliability -- --save`: where and on what it ran, each suite's outcome and figures. */
export interface SavedRun {
  startedAt: string;
  commit: string;
  uncommittedSrcChanges: number;
  runtime: string;
  machine: { cpus: number; cpu: string; memoryGb: number };
  suites: Array<{ name: string; ok: boolean; seconds: number }>;
  audit: string;
  results: SuiteResult[];
}

/** A run of `npm run soak -- --save`. */
export interface SavedSoak {
  startedAt: string;
  commit: string;
  uncommittedSrcChanges: number;
  runtime: string;
  machine: { cpus: number; cpu: string; memoryGb: number };
  duration: number;
  rate: number;
  keys: number;
  periods: Array<{ period: string; requests: number; p50: number; p99: number; max: number; rss: number; statuses: string }>;
  checks: Array<{ name: string; ok: boolean; detail: string }>;
}

/** The machine a saved run ran on, and a file name that sorts by time: `<UTC time>-<commit>.json`. */
export function runIdentity(startedAt: Date): { machine: SavedRun['machine']; runtime: string; commit: string; uncommittedSrcChanges: number; fileName: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short', 'HEAD');
  const uncommittedSrcChanges = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model.replace(/\s+\d+-Core Processor$/, '').trim() ?? 'unknown', memoryGb: Math.round(totalmem() / 1024 ** 3) };
  return { machine, runtime: process.version, commit, uncommittedSrcChanges, fileName: `${startedAt.toISOString().slice(0, 19).replaceAll(':', '-')}Z-${commit}.json` };
}

export interface SuiteResult {
  suite: string;
  /** What was shown, one line. */
  claim: string;
  passed: boolean;
  seconds: number;
  /** Figures, label → value, in the order they should be printed. */
  figures: Array<[string, string | number]>;
  notes?: string[];
}

export function writeResult(result: SuiteResult): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${result.suite}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** Lists keys a suite issued, for the log scan at the end of the run. */
export function recordKeys(suite: string, keys: readonly string[]): void {
  mkdirSync(KEYS_DIR, { recursive: true });
  appendFileSync(join(KEYS_DIR, `${suite}.txt`), keys.map((k) => `${k}\n`).join(''));
}

/** Saves everything a server process wrote. */
export function saveLog(suite: string, label: string, instance: Pick<ServeProcess, 'output'>): void {
  mkdirSync(LOGS_DIR, { recursive: true });
  writeFileSync(join(LOGS_DIR, `${suite}-${label}.log`), instance.output.join(''));
}

// ---------------------------------------------------------------------------------------------
// Problems

export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const CODES = new Set<string>(ERROR_CODES);
const STACK = /\bat [^\s]+ \(|\.js:\d+:\d+|node:internal|node_modules/;

/** Why an error response is not a valid problem of SPEC §7, or undefined when it is. */
export function problemDefect(status: number, contentType: string | undefined, body: string, head: boolean): string | undefined {
  if (contentType !== PROBLEM_TYPE) return `content-type ${String(contentType)}`;
  if (head) return body.length === 0 ? undefined : 'a body on HEAD';
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return `not JSON: ${body.slice(0, 120)}`;
  }
  if (problem.status !== status) return `status field ${String(problem.status)} on a ${status}`;
  if (typeof problem.code !== 'string' || !CODES.has(problem.code)) return `code ${String(problem.code)} not in SPEC §7`;
  if (problem.type !== `/problems/${problem.code}`) return `type ${String(problem.type)}`;
  if (typeof problem.title !== 'string' || typeof problem.detail !== 'string') return 'title or detail missing';
  if (STACK.test(body)) return 'a stack trace or path in the body';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The store

/** A digest of the rows of a table, in a fixed order: equal digests, equal tables. */
export function tableDigest(databaseFile: string, table: 'rates' | 'api_keys' | 'provider_state' | 'quota_usage'): { rows: number; digest: string } {
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    const order: Record<string, string> = {
      rates: 'provider, quote, day',
      api_keys: 'id',
      provider_state: 'provider',
      quota_usage: 'key_id, day',
    };
    const rows = db.prepare(`select * from ${table} order by ${order[table]}`).all();
    const hash = createHash('sha256');
    for (const row of rows) hash.update(`${JSON.stringify(row)}\n`);
    return { rows: rows.length, digest: hash.digest('hex').slice(0, 16) };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** "12 x 200, 3 x 400" from a status → count map, statuses ascending. */
export function tally(counts: Map<string | number, number>): string {
  return [...counts]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([status, n]) => `${n} x ${status}`)
    .join(', ');
}

export function bump<K>(counts: Map<K, number>, key: K, by = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}
