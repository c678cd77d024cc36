/** Reading callgrind's dumps (bench/instructions.ts). */

/**
 * The phases of libuv's loop that run timers and immediates: where the service's work of every few
 * milliseconds or every second runs (the quota journal's appends and folds, the revocation poll),
 * and no request's. Under callgrind a process runs some 50 times slower, so that work weighs some
 * 50 times more per request than at full speed: the `untimed` figures leave it out.
 */
export const TIMED_PHASES = new Set(['uv__run_timers', 'uv__run_check']);

/**
 * The inclusive costs, per event, of the calls a callgrind dump records to the functions named
 * (callgrind's format: a `cfn=` line names the called function, by `(id) name` the first time and
 * by `(id)` after, and the line after each `calls=` line holds the call's inclusive costs).
 * Written by hand: callgrind_annotate prints inclusive costs per function, not as figures to read.
 */
export function callCosts(text: string, names: ReadonlySet<string>, events: number): number[] {
  const sums = new Array<number>(events).fill(0);
  const ids = new Set<string>();
  let called = false;
  let costLine = false;
  for (const line of text.split('\n')) {
    if (costLine) {
      costLine = false;
      if (called) line.trim().split(/\s+/).slice(1).forEach((cost, i) => (sums[i] = sums[i]! + Number(cost)));
      continue;
    }
    const named = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
    if (named) {
      if (named[2] !== undefined && names.has(named[2])) ids.add(named[1]!);
      if (line.startsWith('cfn=')) called = ids.has(named[1]!);
    } else if (line.startsWith('calls=')) costLine = true;
  }
  return sums;
}
