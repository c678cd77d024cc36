import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How node is started for the service: its environment variables and its flags. */
export interface ServiceStart {
  env: Record<string, string>;
  flags: string[];
}

/**
 * How the service's node is started: the first line of the `exrates` command (src/cli/main.ts),
 * which `npm start`, `npx exrates` and the Docker image all execute directly. It is plain
 * `#!/usr/bin/env node`; should it ever carry variables or flags (`env -S NAME=value node --flag`),
 * whatever starts node itself (the benchmark) reads them here and starts node the same way.
 */
export function serviceStart(root: string): ServiceStart {
  const shebang = readFileSync(join(root, 'src', 'cli', 'main.ts'), 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env(?: -S((?: [A-Z_]+=\S+)*))? node((?: --[a-z-]+(?:=\S+)?)*)$/.exec(shebang);
  if (!match) throw new Error(`src/cli/main.ts: the first line is not "#!/usr/bin/env node" (or "#!/usr/bin/env -S [NAME=value ...] node [--flags]"): ${shebang}`);
  const words = (text: string | undefined) => (text ?? '').trim().split(' ').filter((word) => word.length > 0);
  const env = Object.fromEntries(
    words(match[1]).map((assignment) => {
      const at = assignment.indexOf('=');
      return [assignment.slice(0, at), assignment.slice(at + 1)];
    }),
  );
  return { env, flags: words(match[2]) };
}
