/**
 * Clients generated from the served OpenAPI document, as an integrator makes them: hey-api's
 * fetch client and orval's, compiled with `tsc --strict` together with a program that calls the
 * API through them (generated/call.ts) and then run against the service on loopback.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import { generate } from 'orval';
import { createTestApp } from '../helper.js';
import { listenApp } from '../support/ports.js';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);
const METRICS_TOKEN = 'metrics-scrape-token-for-tests';
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('hey-api and orval clients of the served document compile under --strict and answer every operation with the types they declare', async () => {
  const t = await createTestApp({ EXRATES_METRICS_TOKEN: METRICS_TOKEN });
  const dir = mkdtempSync(join(tmpdir(), 'exrates-clients-'));
  try {
    const base = await listenApp(t.app);
    const document = join(dir, 'openapi.json');
    writeFileSync(document, await (await fetch(`${base}/api/v1/openapi.json`)).text());
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', noEmit: true, skipLibCheck: true, lib: ['es2022', 'dom', 'dom.iterable'] },
        include: ['call.ts', 'hey', 'orval'],
      }),
    );
    copyFileSync(join(ROOT, 'test', 'client', 'generated', 'call.ts'), join(dir, 'call.ts'));
    await createClient({ input: document, output: join(dir, 'hey'), plugins: ['@hey-api/client-fetch'], logs: { level: 'silent' } });
    mkdirSync(join(dir, 'orval'));
    await generate({ input: { target: document }, output: { target: join(dir, 'orval', 'api.ts'), client: 'fetch', baseUrl: base } });

    // A type the clients do not give (a History where CSV is text, a second key parameter…) fails here.
    await run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).catch((error: { stdout?: string }) => assert.fail(`tsc --strict:\n${error.stdout ?? String(error)}`));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'call.ts')], { cwd: ROOT, env: { ...process.env, BASE: base, KEY: t.key, METRICS_TOKEN } });
    const called = JSON.parse(stdout.trim().split('\n').at(-1)!) as { hey: string[]; orval: string[] };
    // Every operation of the document, each through both clients (operationId getRate-head: getRateHead).
    const operations = Object.values(JSON.parse(readFileSync(document, 'utf8')).paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((methods) => Object.values(methods).map((operation) => operation.operationId.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())))
      .sort();
    assert.equal(operations.length, 24);
    assert.deepEqual([...called.hey].sort(), operations);
    assert.deepEqual([...called.orval].sort(), operations);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
});
