#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --heap-growing-percent=20 --no-allocation-site-pretenuring
/**
 * The `exrates` command. Node's compile cache (in the system's temporary folder, or
 * NODE_COMPILE_CACHE) is turned on before the rest loads: a start compiles the command's bundle
 * (./commands.js, made by scripts/build.mjs) and the packages it loads, which the cache lets every
 * later start skip. Where no cache can be written, nothing changes.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { main } = await import('./commands.js');
await main(process.argv);
