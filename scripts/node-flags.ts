import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node flags the service runs with, written once: in the first line of the `exrates` command
 * (src/cli/main.ts), which `npm start`, `npx exrates` and the Docker image all execute directly.
 * For whatever starts node itself instead (the benchmark, which also adds flags of its own).
 */
export function serviceNodeFlags(root: string): string[] {
  const shebang = readFileSync(join(root, 'src', 'cli', 'main.ts'), 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env -S node((?: --[a-z-]+(?:=\S+)?)*)$/.exec(shebang);
  if (!match) throw new Error(`src/cli/main.ts: the first line is not "#!/usr/bin/env -S node [--flags]": ${shebang}`);
  return match[1]!.trim().split(' ').filter((flag) => flag.length > 0);
}
