/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function (top N) and per
 * file or package. Used by `npm run bench -- --cpu-prof`, or alone:
 *
 *   node --import tsx bench/profile.ts path/to/file.cpuprofile [--top 15]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileEntry {
  name: string;
  where: string;
  selfMs: number;
  /** Share of the samples where the process was busy (idle excluded). */
  busyPct: number;
}

export interface ProfileSummary {
  file: string;
  durationMs: number;
  busyMs: number;
  idleMs: number;
  topFunctions: ProfileEntry[];
  byFile: ProfileEntry[];
  /** Time with the function anywhere on the stack (self + callees), for the project's own code (dist/ or src/). */
  projectInclusive: ProfileEntry[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A short place name: project files relative to the repository, packages by name, node internals as they are. */
function placeOf(url: string): string {
  if (!url) return '(native)';
  let path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = path.slice(modules + '/node_modules/'.length).split('/');
    const pkg = rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
    return `${pkg} (${rest.slice(rest[0]!.startsWith('@') ? 2 : 1).join('/')})`;
  }
  if (path.startsWith(ROOT)) path = path.slice(ROOT.length);
  return path;
}

function packageOf(url: string): string {
  const place = placeOf(url);
  const paren = place.indexOf(' (');
  return paren > 0 ? place.slice(0, paren) : place;
}

export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Self time per node from the samples and their time deltas (µs); hitCount as a fallback.
  const selfUs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas && profile.samples.length === profile.timeDeltas.length) {
    for (let i = 0; i < profile.samples.length; i++) {
      // timeDeltas[i] is the time since the previous sample; attribute the interval after a sample to it.
      const next = profile.timeDeltas[i + 1] ?? 0;
      const id = profile.samples[i]!;
      selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, next));
    }
  } else {
    const total = profile.endTime - profile.startTime;
    const hits = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0) || 1;
    for (const n of profile.nodes) selfUs.set(n.id, ((n.hitCount ?? 0) / hits) * total);
  }

  const functions = new Map<string, { name: string; where: string; us: number }>();
  const files = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = frame.functionName || '(anonymous)';
    const where = frame.url ? `${placeOf(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${name}\u0000${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const group = frame.url ? packageOf(frame.url) : name.startsWith('(') ? name : '(native)';
    files.set(group, (files.get(group) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs || 1;

  // Inclusive time of the project's functions: walk each sampled node's stack once per function.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, { name: string; where: string; us: number }>();
  const own = (url: string) => {
    const place = placeOf(url);
    return place.startsWith('dist/') || place.startsWith('src/');
  };
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || !frame.url || !own(frame.url)) continue;
      const name = frame.functionName || '(anonymous)';
      const where = `${placeOf(frame.url)}:${frame.lineNumber + 1}`;
      const key = `${name}\u0000${where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = inclusive.get(key) ?? { name, where, us: 0 };
      entry.us += us;
      inclusive.set(key, entry);
    }
  }
  const toEntry = (name: string, where: string, us: number): ProfileEntry => ({
    name,
    where,
    selfMs: Math.round(us / 100) / 10,
    busyPct: Math.round((us / busyUs) * 1000) / 10,
  });
  return {
    file,
    durationMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => toEntry(f.name, f.where, f.us)),
    projectInclusive: [...inclusive.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => toEntry(f.name, f.where, f.us)),
    byFile: [...files.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => toEntry(name, '', us)),
  };
}

export function formatProfile(summary: ProfileSummary): string {
  const lines: string[] = [];
  lines.push(`profile ${summary.file}`);
  lines.push(`sampled ${summary.durationMs} ms: busy ${summary.busyMs} ms, idle ${summary.idleMs} ms (percentages are of busy time)`);
  lines.push('');
  lines.push('| # | self ms | busy % | function | where |');
  lines.push('| ---: | ---: | ---: | --- | --- |');
  summary.topFunctions.forEach((f, i) => lines.push(`| ${i + 1} | ${f.selfMs.toFixed(1)} | ${f.busyPct.toFixed(1)} | ${f.name} | ${f.where} |`));
  lines.push('');
  lines.push('| self ms | busy % | file or package |');
  lines.push('| ---: | ---: | --- |');
  for (const f of summary.byFile) lines.push(`| ${f.selfMs.toFixed(1)} | ${f.busyPct.toFixed(1)} | ${f.name} |`);
  if (summary.projectInclusive.length > 0) {
    lines.push('');
    lines.push('| total ms | busy % | project function (self + callees) | where |');
    lines.push('| ---: | ---: | --- | --- |');
    for (const f of summary.projectInclusive) lines.push(`| ${f.selfMs.toFixed(1)} | ${f.busyPct.toFixed(1)} | ${f.name} | ${f.where} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;
  const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
  if (files.length === 0) {
    console.error('usage: node --import tsx bench/profile.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  for (const file of files) console.log(`${formatProfile(summariseProfile(file, top))}\n`);
}
