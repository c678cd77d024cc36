/**
 * Load generation with wrk (C, one thread, in its own process: far cheaper per request than the
 * server, so that the server is the limit): a number of connections, one request at a time each,
 * for a number of seconds, cycling through a scenario's requests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCpu, track } from './processes.js';
import { watchServer, type ServerFigures } from './sampling.js';

export type LoadRequest = { path: string; headers: Record<string, string> };

/** Fails with what to do when wrk is not installed (`wrk --version` exits 1 after printing its version). */
export function requireWrk(): void {
  if (spawnSync('wrk', ['--version']).status !== 1) throw new Error('the bench needs wrk (apt-get install wrk, brew install wrk)');
}

/** `pid`: the server's process (its children are counted too); `request(n)`: the n-th request of the rotation; `cpus`: wrk's (taskset's list). */
export interface LoadRun {
  connections: number;
  seconds: number;
  port: number;
  pid: number | undefined;
  request(n: number): LoadRequest;
  cpus?: string;
}

export interface Measurement extends ServerFigures {
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  responses: number;
  /** Responses of status 400 or more, socket errors and timeouts. */
  errors: number;
  bytesPerResponse: number;
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** A warm-up: load without measuring. */
export const warmUp = async (run: LoadRun): Promise<void> => void (await runWrk(run));

/** A measured run: wrk's figures and the server's (see sampling.ts). */
export async function measure(run: LoadRun): Promise<Measurement> {
  const watch = watchServer(run.pid);
  const result = await runWrk(run);
  watch.stop();
  const seconds = result.durationUs / 1e6;
  const ms = (us: number) => round(us / 1000);
  return {
    requestsPerSecond: round(result.requests / seconds, 0),
    latencyMs: { p50: ms(result.p50), p90: ms(result.p90), p99: ms(result.p99), p999: ms(result.p999), max: ms(result.max), mean: ms(result.mean) },
    responses: result.requests,
    errors: result.status + result.connect + result.read + result.write + result.timeout,
    bytesPerResponse: result.requests ? Math.round(result.bytes / result.requests) : 0,
    ...watch.figures(round((result.cpuSeconds / seconds) * 100, 0), result.requests),
  };
}

/** Distinct requests a wrk run cycles through, keys and pairs rotating. */
const WRK_REQUESTS = 4000;

type WrkSummary = Record<'requests' | 'durationUs' | 'bytes' | 'connect' | 'read' | 'write' | 'status' | 'timeout' | 'p50' | 'p90' | 'p99' | 'p999' | 'max' | 'mean' | 'cpuSeconds', number>;

/** One wrk run, one thread: a generated Lua script cycles through prebuilt requests and prints its summary as JSON. */
async function runWrk(run: LoadRun): Promise<WrkSummary> {
  const lua = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  const entries: string[] = [];
  for (let n = 0; n < WRK_REQUESTS; n++) {
    const request = run.request(n);
    const headers = Object.entries(request.headers).map(([name, value]) => `[${lua(name)}]=${lua(value)}`).join(',');
    entries.push(`{${lua(request.path)},{${headers}}}`);
  }
  const script = [
    `local list = {${entries.join(',\n')}}`,
    'local prepared = {}',
    'local counter = 0',
    'init = function(args) for i, r in ipairs(list) do prepared[i] = wrk.format("GET", r[1], r[2]) end end',
    'request = function() counter = counter + 1; return prepared[(counter % #prepared) + 1] end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"durationUs\\":%d,\\"bytes\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"status\\":%d,\\"timeout\\":%d,\\"p50\\":%d,\\"p90\\":%d,\\"p99\\":%d,\\"p999\\":%d,\\"max\\":%d,\\"mean\\":%f,\\"cpuSeconds\\":%f}\\n",',
    '    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean, os.clock()))',
    'end',
  ].join('\n');
  const file = join(tmpdir(), `exrates-bench-${process.pid}-${Date.now()}.lua`);
  writeFileSync(file, script);
  try {
    const args = ['-t1', `-c${run.connections}`, `-d${Math.max(1, Math.round(run.seconds))}s`, '--timeout', '10s', '-s', file, `http://127.0.0.1:${run.port}`];
    const [command, commandArgs] = onCpu(run.cpus, 'wrk', args);
    const child = track(spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let output = '';
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = output.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${output.slice(-2000)}`);
    return JSON.parse(line.slice('WRKJSON '.length)) as WrkSummary;
  } finally {
    rmSync(file, { force: true });
  }
}
