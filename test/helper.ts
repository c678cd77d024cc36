/**
 * The entry point most suites import from. Each job has its module under test/support/: data.ts
 * (the shared data and clock), stores.ts (temp folders, PostgreSQL, Redis), apps.ts (built apps),
 * env.ts, processes.ts, http.ts, ports.ts, upstreams.ts, proxy.ts, wait.ts.
 */
export { ECB_CSV, ECB_XML_DIR, FIXED_NOW, SHARED_DATA } from './support/data.js';
export { tempDir } from './support/stores.js';
export { createTestApp, issueKey, loadAll, testConfig, unissuedKey, type TestApp } from './support/apps.js';
