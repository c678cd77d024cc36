/**
 * Reading what callgrind and node write, for `npm run bench:instructions` (instructions.ts): the
 * self cost of every function in a callgrind file, with the JIT's code named from node's
 * --perf-basic-prof map.
 */
import { readFileSync } from 'node:fs';

/**
 * The JIT's code, by address: node's --perf-basic-prof map (`<start> <size> <name>` in hex). The map
 * only grows: code that V8 freed keeps its line, and its addresses are used again by later code,
 * so the last line that covers an address names what ran there at the end (the measured run comes
 * after the warm-up).
 */
export function readPerfMap(path: string): (address: number) => string | undefined {
  const entries = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), name: name.join(' ') };
    });
  const named = new Map<number, string | undefined>();
  return (address) => {
    if (named.has(address)) return named.get(address);
    let name: string | undefined;
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!;
      if (address >= entry.start && address < entry.end) {
        name = entry.name;
        break;
      }
    }
    named.set(address, name);
    return name;
  };
}

/**
 * Self cost per function of a callgrind file (its format: valgrind.org/docs/manual/cl-format.html).
 * A cost line right after `calls=` is the call's inclusive cost, counted to the callee, not here.
 * Written by hand: callgrind_annotate prints the same, but cannot name the JIT's code.
 */
export function selfCosts(text: string, nameOf: (address: number) => string | undefined): Map<string, number> {
  const names = new Map<string, string>();
  const costs = new Map<string, number>();
  let current: string | undefined;
  let callCost = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const match = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (!match) continue;
      if (match[2] !== undefined) names.set(match[1]!, match[2]);
      if (line.startsWith('fn=')) {
        const name = names.get(match[1]!) ?? match[1]!;
        const address = /^0x([0-9a-f]+)$/.exec(name);
        current = address ? (nameOf(parseInt(address[1]!, 16)) ?? 'JIT code without a name') : name;
        callCost = false;
      }
    } else if (line.startsWith('calls=')) {
      callCost = true;
    } else if (/^[0-9+\-*]/.test(line)) {
      if (callCost) callCost = false;
      else if (current !== undefined) costs.set(current, (costs.get(current) ?? 0) + Number(line.split(' ')[1] ?? 0));
    }
  }
  return costs;
}
