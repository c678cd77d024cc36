/**
 * The second half of `npm run build`, after tsc has checked src/ and compiled it to dist/: bundles
 * the portal's modules into its one script and copies the page's files, and bundles the modules of the `exrates` command (dist/cli/commands.js,
 * which dist/cli/main.js loads) with two packages, typebox and kysely, into that one file.
 *
 * Why: node loads a start's modules one by one, and those two packages are some 940 small ES
 * modules among those a start loads; resolving, reading and linking them was a large part of a
 * cold start (the bench measures the cold start: docs/performance.md, Latest results). The other
 * packages stay in node_modules and load as they are: some read files of their own, one is
 * native, and several are also loaded by other packages, which would then load a second copy.
 *
 * Plain JavaScript, so that it runs with node alone on every runtime `engines` admits.
 */
import { chmodSync, cpSync } from 'node:fs';
import { build } from 'esbuild';

const BUNDLED = new Set(['typebox', 'kysely']);

// The portal's TypeScript modules (src/portal/*.ts, checked by tsconfig.browser.json) as the one
// script the page loads, portal.js, served as it is under a name with its hash. It is written
// beside the page in src/portal/ (untracked), where a server run from src/ (tests, `npm run dev`)
// finds it, then copied to dist/portal/ with the page, its style and its icon.
await build({
  entryPoints: ['src/portal/main.ts'],
  outfile: 'src/portal/portal.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  // Chart.js is its own script, loaded before this one; its types only are imported.
  external: ['chart.js'],
  charset: 'utf8',
  legalComments: 'none',
  logLevel: 'warning',
});
cpSync('src/portal', 'dist/portal', { recursive: true, filter: (path) => !path.endsWith('.ts') });
await build({
  entryPoints: ['dist/cli/commands.js'],
  outfile: 'dist/cli/commands.js',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // Composed with tsc's source maps: a stack trace still names the line in src/.
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'packages-stay-installed',
      setup(builder) {
        builder.onResolve({ filter: /^[^./]/ }, ({ path }) => {
          const name = path.split('/').slice(0, path.startsWith('@') ? 2 : 1).join('/');
          return BUNDLED.has(name) ? undefined : { path, external: true };
        });
      },
    },
  ],
});
chmodSync('dist/cli/main.js', 0o755);
