/**
 * The one way a generated file is kept: written, or with --check compared with what is committed
 * (a missing file counts as out of date), so that `npm run lint` fails when it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function writeOrCheck(target: string, rendered: string, regenerate: string): void {
  const name = relative(ROOT, target);
  if (!process.argv.includes('--check')) {
    writeFileSync(target, rendered);
    console.log(`wrote ${target}`);
    return;
  }
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // A missing file is reported below like a stale one.
  }
  if (current !== rendered) {
    console.error(`${name} is out of date: run ${regenerate}`);
    process.exit(1);
  }
  console.log(`${name} is up to date`);
}

/**
 * Replaces what lies between `<!-- generated: NAME (REGENERATE) -->` and `<!-- end: NAME -->` in
 * `doc`, the text of the file `file`; hand-written prose around the block is kept.
 */
export function fillBlock(doc: string, file: string, name: string, regenerate: string, content: string): string {
  const start = `<!-- generated: ${name} (${regenerate}) -->`;
  const end = `<!-- end: ${name} -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file}: the markers "${start}" and "${end}" are missing`);
  return `${doc.slice(0, from + start.length)}\n${content}\n${doc.slice(to)}`;
}
