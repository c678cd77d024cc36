/**
 * Load generation: a number of connections, one request at a time each, for a number of seconds,
 * cycling through a scenario's requests; measured with wrk (C, in its own process, much cheaper
 * per request) when installed, else with autocannon in the bench's own process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type AutocannonClient, type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { onCpu, track } from './processes.js';
import { watchServer, type ServerFigures } from './sampling.js';

export type Generator = 'wrk' | 'autocannon';
export type LoadRequest = AutocannonRequest;

/** wrk when asked for or, by default, when installed; else autocannon. */
export function chooseGenerator(wanted: Generator | undefined): Generator {
  let installed: boolean;
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    installed = true;
  } catch (error) {
    // wrk --version exits 1 after printing its version: installed all the same.
    installed = (error as { status?: number }).status === 1;
  }
  if (wanted === 'wrk' && !installed) throw new Error('--generator wrk: wrk is not installed (apt-get install wrk)');
  return wanted ?? (installed ? 'wrk' : 'autocannon');
}

export interface LoadRun {
  generator: Generator;
  connections: number;
  seconds: number;
  port: number;
  /** The server's process (its children are counted too). */
  pid: number | undefined;
  /** The n-th request of the rotation. */
  request(n: number): LoadRequest;
  /** The CPUs wrk runs on (taskset's list), when the run is pinned. */
  cpus?: string;
  /**
   * Requests per second to send in all, paced, instead of as fast as the server answers. With
   * wrk, each connection waits before each request for a random time of mean connections ÷ rate
   * (pacing()): the rate reached is a little lower, by the responses' own latency.
   */
  rate?: number;
}

export interface Measurement extends ServerFigures {
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  responses: number;
  errors: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  bytesPerResponse: number;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** A warm-up: load without measuring. */
export async function warmUp(run: LoadRun): Promise<void> {
  if (run.generator === 'wrk') await runWrk(run);
  else await runAutocannon(run, undefined);
}

/** A measured run: the load generator's figures and the server's (see sampling.ts). */
export async function measure(run: LoadRun): Promise<Measurement> {
  const watch = watchServer(run.pid, true);
  try {
    if (run.generator === 'wrk') {
      const result = await runWrk(run);
      watch.stop();
      const seconds = result.durationUs / 1e6;
      const ms = (us: number) => round(us / 1000);
      const socketErrors = result.connect + result.read + result.write;
      return {
        requestsPerSecond: round(result.requests / seconds, 0),
        // wrk's latencies cover every response (there are no errors in a passing run).
        latencyMs: { p50: ms(result.p50), p90: ms(result.p90), p99: ms(result.p99), p999: ms(result.p999), max: ms(result.max), mean: ms(result.mean) },
        responses: result.requests,
        errors: result.status + socketErrors + result.timeout,
        non2xx: result.status,
        socketErrors,
        timeouts: result.timeout,
        // wrk counts only responses with a status of 400 or more.
        statusCodes: { '<400': result.requests - result.status, '>=400': result.status },
        bytesPerResponse: result.requests ? Math.round(result.bytes / result.requests) : 0,
        ...watch.figures(round((result.cpuSeconds / seconds) * 100, 0), result.requests),
      };
    }
    const latencies: number[] = [];
    const own = process.cpuUsage();
    let bytes = 0;
    const result = await runAutocannon(run, (statusCode, responseBytes, responseTime) => {
      bytes += responseBytes;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
    watch.stop();
    const cpu = process.cpuUsage(own);
    const responses = Object.values(result.statusCodeStats).reduce((sum, { count }) => sum + count, 0);
    const sorted = Float64Array.from(latencies).sort();
    const percentile = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : NaN);
    return {
      requestsPerSecond: round(responses / result.duration, 0),
      // Measured per response, not from autocannon's histogram of 1 ms buckets.
      latencyMs: {
        p50: round(percentile(50)),
        p90: round(percentile(90)),
        p99: round(percentile(99)),
        p999: round(percentile(99.9)),
        max: round(percentile(100)),
        mean: round(latencies.reduce((a, b) => a + b, 0) / latencies.length),
      },
      responses,
      errors: result.non2xx + result.errors,
      non2xx: result.non2xx,
      socketErrors: result.errors,
      timeouts: result.timeouts,
      statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
      bytesPerResponse: responses ? Math.round(bytes / responses) : 0,
      ...watch.figures(round(((cpu.user + cpu.system) / 1e6 / watch.wallSeconds()) * 100, 0), responses),
    };
  } finally {
    watch.stop();
  }
}

/** Requests each autocannon connection cycles through; 50 connections × 200 cover every key and pair several times. */
const REQUESTS_PER_CONNECTION = 200;

function runAutocannon(run: LoadRun, onResponse: ((statusCode: number, bytes: number, ms: number) => void) | undefined): Promise<AutocannonResult> {
  // Each connection gets its own slice of the rotation, so that keys and pairs spread over all of them.
  let next = 0;
  const setupClient = (client: AutocannonClient) => {
    const first = (next++ % run.connections) * REQUESTS_PER_CONNECTION;
    client.setRequests(Array.from({ length: REQUESTS_PER_CONNECTION }, (_, j) => run.request(first + j)));
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${run.port}`,
        connections: run.connections,
        duration: run.seconds,
        pipelining: 1,
        timeout: 10,
        ...(run.rate ? { overallRate: run.rate } : {}),
        requests: [run.request(0)],
        setupClient,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, statusCode, bytes, ms) => onResponse(statusCode, bytes, ms));
  });
}

/** Distinct requests a wrk run cycles through (keys and pairs rotate as with autocannon). */
const WRK_REQUESTS = 4000;

interface WrkSummary {
  requests: number;
  durationUs: number;
  bytes: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  cpuSeconds: number;
}

/**
 * wrk's delay(): milliseconds before a connection's next request. Drawn from an exponential
 * distribution of mean connections × 1000 ÷ rate, so that each connection sends as a Poisson
 * process and all of them together too, as many independent clients do: a fixed delay would keep
 * the connections in step, sending in bursts. wrk takes whole milliseconds: each draw is rounded
 * down or up at random, so that the mean holds.
 */
export function pacing(connections: number, rate: number): string {
  const mean = (connections * 1000) / rate;
  return `delay = function() local x = -math.log(1 - math.random()) * ${mean.toFixed(6)}; local d = math.floor(x); if math.random() < x - d then d = d + 1 end; return d end`;
}

/** One wrk run, one thread: a generated Lua script cycles through prebuilt requests and prints its summary as JSON. */
async function runWrk(run: LoadRun): Promise<WrkSummary> {
  const lua = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  const entries: string[] = [];
  for (let n = 0; n < WRK_REQUESTS; n++) {
    const request = run.request(n);
    const headers = Object.entries(request.headers ?? {}).map(([name, value]) => `[${lua(name)}]=${lua(value)}`).join(',');
    entries.push(`{${lua(request.path ?? '/')},{${headers}}}`);
  }
  const script = [
    `local list = {${entries.join(',\n')}}`,
    'local prepared = {}',
    'local counter = 0',
    'init = function(args) for i, r in ipairs(list) do prepared[i] = wrk.format("GET", r[1], r[2]) end end',
    'request = function() counter = counter + 1; return prepared[(counter % #prepared) + 1] end',
    ...(run.rate ? [pacing(run.connections, run.rate)] : []),
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
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = output.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${output.slice(-2000)}`);
    return JSON.parse(line.slice('WRKJSON '.length)) as WrkSummary;
  } finally {
    rmSync(file, { force: true });
  }
}
