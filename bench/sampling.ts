/**
 * What a server and the machine use during a measured run, read from Linux's /proc: CPU time of
 * the server (and its workers), its resident memory, and the machine's busy and stolen time.
 * Read by hand: a few fields of three files, which a package would wrap without saving code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { sleep } from './processes.js';

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/PID/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Resident memory now and its high-water mark (VmHWM), in kB. */
export function processMemory(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used. */
function processCpuSeconds(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / clockTicks : undefined;
}

/** A process and its children (the workers of EXRATES_WORKERS > 1). */
function processTree(pid: number): number[] {
  const tree = [pid];
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && Number(statFields(Number(entry))?.[1]) === pid) tree.push(Number(entry));
  }
  return tree;
}

/** CPU seconds used by the processes, or undefined when one of them is gone. */
function treeCpuSeconds(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const seconds = processCpuSeconds(pid);
    if (seconds === undefined) return undefined;
    sum += seconds;
  }
  return sum;
}

/**
 * Machine-wide CPU time from /proc/stat, in ticks over every CPU: busy (processes and kernel),
 * steal (time a virtual machine's CPUs waited while the host ran something else) and total.
 */
function machineCpu(): { busy: number; steal: number; total: number } | undefined {
  try {
    const values = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    const steal = values[7] ?? 0;
    return { busy: total - idle - steal, steal, total };
  } catch {
    return undefined;
  }
}

/** Share of the machine's CPUs busy over the next `ms`, in %. */
export async function machineBusyFor(ms: number): Promise<number | undefined> {
  const before = machineCpu();
  await sleep(ms);
  const after = machineCpu();
  if (!before || !after || after.total <= before.total) return undefined;
  return Math.round(((after.busy - before.busy) / (after.total - before.total)) * 100);
}

/** What a server and the machine used during a measured run. CPU shares are in % of one core. */
export interface ServerFigures {
  serverCpuPct: number | undefined;
  /** The server's CPU time (all its processes) over the requests answered: moves far less than requests/s on a noisy host. */
  cpuPerRequestUs: number | undefined;
  loadGeneratorCpuPct: number;
  /** CPU used by neither the server nor the load generator (other processes, the kernel's loopback work). */
  otherCpuPct: number | undefined;
  /** CPU time the host gave to other virtual machines. */
  stealPct: number | undefined;
}

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Watches a server (and its workers: CPU is summed over them) from now on; stop() ends the
 * window, figures() gives what it saw, given the load generator's CPU and the requests.
 */
export function watchServer(pid: number | undefined) {
  const pids = pid !== undefined ? processTree(pid) : [];
  const cpuBefore = treeCpuSeconds(pids);
  const machineBefore = machineCpu();
  const wallStart = performance.now();
  let wallEnd: number | undefined;
  const wallSeconds = () => ((wallEnd ?? performance.now()) - wallStart) / 1000;
  return {
    stop(): void {
      wallEnd ??= performance.now();
    },
    figures(loadGeneratorCpuPct: number, requests: number): ServerFigures {
      const cpuAfter = treeCpuSeconds(pids);
      const machineAfter = machineCpu();
      const serverCpu = pids.length > 0 && cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
      const serverCpuPct = serverCpu !== undefined ? round((serverCpu / wallSeconds()) * 100) : undefined;
      const ticks = machineBefore && machineAfter && machineAfter.total > machineBefore.total ? machineAfter.total - machineBefore.total : undefined;
      // Shares of every CPU's time, in % of one core.
      const share = (pick: 'busy' | 'steal') => (ticks ? ((machineAfter![pick] - machineBefore![pick]) / ticks) * 100 * cpus().length : undefined);
      const busy = share('busy');
      const steal = share('steal');
      return {
        serverCpuPct,
        cpuPerRequestUs: serverCpu !== undefined && requests > 0 ? round((serverCpu / requests) * 1e6, 1) : undefined,
        loadGeneratorCpuPct,
        stealPct: steal !== undefined ? round(steal) : undefined,
        otherCpuPct: busy !== undefined && serverCpuPct !== undefined ? Math.max(0, round(busy - serverCpuPct - loadGeneratorCpuPct)) : undefined,
      };
    },
  };
}
