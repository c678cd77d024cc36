import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The flags `npm start` gives node before the service's entry point: written once, in
 * package.json, and read from there by the benchmark; a test holds the Dockerfile's entrypoint and
 * the `exrates` command's first line to the same.
 */
export function serviceNodeFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start!.split(/\s+/);
  const entry = words.indexOf('dist/cli/main.js');
  if (words[0] !== 'node' || entry === -1) throw new Error(`package.json: the start script is not "node [flags] dist/cli/main.js serve": ${pkg.scripts.start}`);
  return words.slice(1, entry);
}
