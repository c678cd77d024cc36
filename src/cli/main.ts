#!/usr/bin/env node
/**
 * The `exrates` command. The running Node.js is checked first (./node-version.js imports
 * nothing): on an unsupported one, one line says which versions run it and how to get one.
 * Node's compile cache (in the system's temporary folder, or NODE_COMPILE_CACHE) is then turned
 * on before the rest loads: a start compiles the command's bundle (./commands.js, made by
 * scripts/build.mjs) and the packages it loads, which the cache lets every later start skip.
 * Where no cache can be written, nothing changes.
 */
import { unsupportedNodeLine } from './node-version.js';

const unsupported = unsupportedNodeLine(process.versions.node);
if (unsupported !== undefined) {
  console.error(unsupported);
  process.exit(1);
}
const { enableCompileCache } = await import('node:module');
enableCompileCache();
const { main } = await import('./commands.js');
await main(process.argv);
