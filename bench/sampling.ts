/**
 * What a server and the machine use, read from Linux's /proc: CPU time of the server (and its
 * workers), its memory, the machine's busy and stolen time. Read by hand: a few fields of three
 * files, which a package would wrap without saving code.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** Linux's USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on x86 and ARM. */
const CLOCK_TICKS = 100;

/** The fields of /proc/PID/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Resident memory now and its high-water mark (VmHWM), in MB. */
export function processMemory(pid: number): { rssMb: number; hwmMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (name: string) => Math.round(Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]) / 102.4) / 10;
  return { rssMb: mb('VmRSS'), hwmMb: mb('VmHWM') };
}

/** CPU seconds (user + system) of a process and its children (the workers of EXRATES_WORKERS), or undefined when one is gone. */
function treeCpuSeconds(pid: number): number | undefined {
  const tree = [pid, ...readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && Number(statFields(Number(entry))?.[1]) === pid).map(Number)];
  let sum = 0;
  for (const p of tree) {
    const fields = statFields(p);
    if (!fields) return undefined;
    sum += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  }
  return sum;
}

/** Machine-wide CPU time from /proc/stat, in ticks over every CPU: busy (processes and kernel), steal (the host running other machines) and total. */
function machineCpu(): { busy: number; steal: number; total: number } {
  const values = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const steal = values[7] ?? 0;
  return { busy: total - values[3]! - values[4]! - steal, steal, total };
}

/** Share of the machine's CPUs busy over the next `ms`, in %. */
export async function machineBusyFor(ms: number): Promise<number> {
  const before = machineCpu();
  await sleep(ms);
  const after = machineCpu();
  return Math.round(((after.busy - before.busy) / Math.max(1, after.total - before.total)) * 100);
}

/** What a server and the machine used during a measured run. CPU shares are in % of one core. */
export interface ServerFigures {
  serverCpuPct: number | undefined;
  /** The server's CPU time (all its processes) over the requests answered: moves far less than requests/s on a busy host. */
  cpuPerRequestUs: number | undefined;
  loadGeneratorCpuPct: number;
  /** CPU used by neither the server nor wrk (other processes, the kernel's loopback work). */
  otherCpuPct: number | undefined;
  /** CPU time the host gave to other virtual machines. */
  stealPct: number | undefined;
}

/** Watches a server from now on; stop() ends the window, figures() gives what it saw, given wrk's CPU and the requests. */
export function watchServer(pid: number | undefined) {
  const cpuBefore = pid === undefined ? undefined : treeCpuSeconds(pid);
  const machineBefore = machineCpu();
  const wallStart = performance.now();
  let wallEnd: number | undefined;
  return {
    stop(): void {
      wallEnd ??= performance.now();
    },
    figures(loadGeneratorCpuPct: number, requests: number): ServerFigures {
      const cpuAfter = pid === undefined ? undefined : treeCpuSeconds(pid);
      const serverCpu = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
      const serverCpuPct = serverCpu !== undefined ? Math.round((serverCpu / (((wallEnd ?? performance.now()) - wallStart) / 1000)) * 100) : undefined;
      const machine = machineCpu();
      const share = (pick: 'busy' | 'steal') => ((machine[pick] - machineBefore[pick]) / Math.max(1, machine.total - machineBefore.total)) * 100 * cpus().length;
      return {
        serverCpuPct,
        cpuPerRequestUs: serverCpu !== undefined && requests > 0 ? Math.round((serverCpu / requests) * 1e7) / 10 : undefined,
        loadGeneratorCpuPct,
        otherCpuPct: serverCpuPct !== undefined ? Math.max(0, Math.round(share('busy') - serverCpuPct - loadGeneratorCpuPct)) : undefined,
        stealPct: Math.round(share('steal')),
      };
    },
  };
}
