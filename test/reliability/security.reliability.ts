/**
 * Security, against live `exrates serve` processes on loopback:
 *  - keys are stored only as SHA-256 hashes (every column of every table is searched for them);
 *  - no key reaches the log, wherever a client puts it (request logging on; the runner also scans
 *    the logs of the whole run for every key any suite issued);
 *  - the 401 for an unknown, a revoked, a malformed and a missing key are the same bytes, and an
 *    unknown and a revoked key take the same time, on PostgreSQL where a store round trip is
 *    large enough to see: the suite first shows that it can see one;
 *  - SQL injection and path traversal attempts are harmless;
 *  - security headers, request line and header limits, CORS;
 *  - hostile clients get nothing expensive: bodies refused from their headers, JSON-RPC batches on
 *    /mcp refused or bounded and counted, two Host headers refused, /metrics not public.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { tempDir } from '../helper.js';
import { processEnv, sharedHistoryVars } from '../support/env.js';
import { get, send, type Reply } from '../support/http.js';
import { createKey, ensureBuilt, revokeKey, startInstance, stopInstance, type Instance, type ProcessSetup } from '../support/processes.js';
import { createPostgresSchema, postgresAvailable } from '../support/stores.js';
import { rawRequest } from '../support/raw-http.js';
import { waitFor } from '../support/wait.js';
import { median, problemDefect, recordKeys, saveLog, tableDigest, writeResult } from './harness.js';

const SUITE = 'security';
const figures: Array<[string, string | number]> = [];
const failures: string[] = [];
const started = performance.now();

function baseEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return processEnv({ EXRATES_DATABASE_URL: databaseUrl, ...sharedHistoryVars(), EXRATES_LOG_REQUESTS: 'true', EXRATES_CONTACT_EMAIL: 'keys@example.org' });
}

/** Records a check's outcome for the summary, then asserts it. */
function check(name: string, ok: boolean, detail: string): void {
  figures.push([name, `${ok ? 'yes' : 'NO'}: ${detail}`]);
  if (!ok) failures.push(`${name}: ${detail}`);
  assert.ok(ok, `${name}: ${detail}`);
}


/** Resident set size of a process in MiB, from /proc (Linux); NaN elsewhere. */
function rssMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Sends a request's head and `bodyBytes` of the body it announces (never the rest): the status of
 * the answer, whether the server then closed the connection, and the ms to the answer.
 */
function announceBody(port: number, head: string, bodyBytes: number): Promise<{ status: number; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let ms = Number.NaN;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), closed, ms });
    };
    const timer = setTimeout(() => finish(false), 10_000);
    socket.on('data', (chunk: Buffer) => {
      if (text === '') ms = performance.now() - started;
      text += chunk.toString('latin1');
    });
    // Closed by the server: its FIN, or the reset its kernel sends for the body bytes it never read.
    socket.on('close', () => finish(true));
    socket.on('end', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(head);
    // Written in pieces, as a client streaming its body would, while the server may already refuse it.
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const more = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        sent += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', more);
      }
    };
    more();
  });
}

describe('security', () => {
  const dir = tempDir('exrates-security-');
  const databaseFile = join(dir.path, 'security.db');
  let setup: ProcessSetup;
  let server: Instance;
  let key: string;
  let revoked: string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

  before(async () => {
    await ensureBuilt();
    setup = { cwd: dir.path, env: baseEnv(`sqlite:${databaseFile}`) };
    key = await createKey(setup, 'pro');
    revoked = await createKey(setup, 'free');
    await revokeKey(setup, revoked);
    recordKeys(SUITE, [key, revoked]);
    server = await startInstance('security', setup);
  });

  after(async () => {
    agent.destroy();
    if (server) {
      await stopInstance(server);
      saveLog(SUITE, 'sqlite', server);
    }
    writeResult({
      suite: SUITE,
      claim: 'keys only hashed and never logged, identical and equally timed 401s, injection and traversal harmless, headers, limits, CORS',
      passed: failures.length === 0,
      seconds: (performance.now() - started) / 1000,
      figures,
      notes: failures,
    });
    dir.remove();
  });

  it('stores keys only as SHA-256 hashes: no column of any table holds a key or its secret part', () => {
    const db = new Database(databaseFile, { readonly: true });
    try {
      const tables = (db.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
      const found: string[] = [];
      let cells = 0;
      for (const table of tables) {
        for (const row of db.prepare(`select * from "${table}"`).all() as Array<Record<string, unknown>>) {
          for (const [column, value] of Object.entries(row)) {
            cells += 1;
            const text = String(value);
            for (const k of [key, revoked]) if (text.includes(k.slice(12)) || text.includes(k)) found.push(`${table}.${column}`);
          }
        }
      }
      const byPrefix = (a: { prefix: string }, b: { prefix: string }) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0);
      const rows = (db.prepare('select prefix, hash from api_keys').all() as Array<{ prefix: string; hash: string }>).sort(byPrefix);
      const expected = [key, revoked].map((k) => ({ prefix: k.slice(0, 12), hash: createHash('sha256').update(k).digest('hex') })).sort(byPrefix);
      check('keys stored only as hashes (SQLite)', found.length === 0 && JSON.stringify(rows) === JSON.stringify(expected), `${cells} cells in ${tables.length} tables searched; api_keys holds the 12-character prefix and the SHA-256 of each key; key bodies found in: ${found.join(', ') || 'none'}`);
    } finally {
      db.close();
    }
  });

  it('the 401 for an unknown, a revoked, a malformed and a missing key is the same answer', async () => {
    const unknown = `exr_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'A').slice(0, 32)}`;
    const answers: Record<string, Reply> = {
      unknown: await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': unknown }, agent }),
      revoked: await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': revoked }, agent }),
      'revoked in the query': await get(`${server.base}/api/v1/rate?from=EUR&to=USD&apikey=${revoked}`, { agent }),
      malformed: await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': "' OR 1=1 --" }, agent }),
      missing: await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { agent }),
    };
    const shape = (reply: Reply) => JSON.stringify({ status: reply.status, body: reply.body, headers: Object.keys(reply.headers).filter((h) => h !== 'date').sort().map((h) => [h, reply.headers[h]]) });
    const distinct = new Set(Object.values(answers).map(shape));
    check('identical 401s', distinct.size === 1 && answers.unknown!.status === 401, `${Object.keys(answers).join(', ')}: ${distinct.size} distinct answer(s), status ${answers.unknown!.status}, ${answers.unknown!.body.length}-byte body`);
  });

  it('SQL injection in every parameter and in the key changes nothing and answers a 4xx problem', async () => {
    const before = { rates: tableDigest(databaseFile, 'rates'), keys: tableDigest(databaseFile, 'api_keys') };
    const payloads = [
      "' OR '1'='1",
      "EUR'; DROP TABLE rates; --",
      "EUR'; UPDATE api_keys SET revoked_at = NULL; --",
      '1; DELETE FROM quota_usage',
      "USD' UNION SELECT hash, hash, hash FROM api_keys --",
      'EUR") OR ("1"="1',
      "1' AND sleep(5) --",
      "'; SELECT pg_sleep(5); --",
    ];
    const bad: string[] = [];
    let sent = 0;
    for (const payload of payloads) {
      const p = encodeURIComponent(payload);
      const urls = [
        `/api/v1/rate?from=${p}&to=USD`,
        `/api/v1/rate?from=EUR&to=${p}`,
        `/api/v1/convert?from=EUR&to=USD&amount=${p}`,
        `/api/v1/history?from=EUR&to=USD&range=${p}`,
        `/api/v1/history?from=EUR&to=USD&format=${p}`,
        `/problems/${p}`,
      ];
      for (const url of urls) {
        const reply = await get(`${server.base}${url}`, { headers: { 'X-Api-Key': key }, agent });
        sent += 1;
        const defect = reply.status >= 400 && reply.status < 500 ? problemDefect(reply.status, reply.headers['content-type'], reply.body, false) : `status ${reply.status}`;
        if (defect || reply.ms > 2_000) bad.push(`${url}: ${defect ?? `${Math.round(reply.ms)} ms`}`);
      }
      for (const headers of [{ 'X-Api-Key': payload.replace(/[^\x20-\x7e]/g, '') }, { 'X-Api-Key': `exr_${payload.replace(/[^\x20-\x7e]/g, '')}` }]) {
        const reply = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers, agent });
        sent += 1;
        if (reply.status !== 401) bad.push(`key ${payload}: ${reply.status}`);
      }
    }
    const afterRun = { rates: tableDigest(databaseFile, 'rates'), keys: tableDigest(databaseFile, 'api_keys') };
    const unchanged = JSON.stringify(afterRun) === JSON.stringify(before);
    check('SQL injection harmless', bad.length === 0 && unchanged, `${sent} requests with ${payloads.length} payloads in every parameter and the key: all 4xx problems answered in under 2 s (no sleep ran), rates and keys unchanged: ${unchanged}; ${bad.slice(0, 3).join('; ')}`);
  });

  it('path traversal reaches no file outside the served folders', async () => {
    const attempts = [
      '/docs/static/../../package.json',
      '/docs/static/..%2f..%2fpackage.json',
      '/docs/static/%2e%2e/%2e%2e/package.json',
      '/docs/static/%252e%252e/%252e%252e/package.json',
      '/docs/static/....//....//package.json',
      '/docs/static/..\\..\\package.json',
      '/docs/static/%2e%2e%5c%2e%2e%5cpackage.json',
      '/docs/static/../../../../../../etc/passwd',
      '/docs/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/docs/static/%00../../package.json',
      '/docs/%2e%2e/package.json',
      '/portal/../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/problems/..%2f..%2fpackage.json',
      '/api/v1/..%2f..%2fpackage.json',
    ];
    const leaks: string[] = [];
    const statuses = new Map<number, number>();
    for (const path of attempts) {
      const reply = await rawRequest(server.port, Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      const body = reply.body.toString('utf8');
      if (/"name":\s*"exrates"|root:x?:0:0|"devDependencies"/.test(body) || reply.status >= 500 || reply.status === 200) leaks.push(`${path}: ${reply.status} ${body.slice(0, 80)}`);
      if (reply.status >= 400 && problemDefect(reply.status, reply.headers['content-type'], body, false)) leaks.push(`${path}: not a problem`);
    }
    check('path traversal harmless', leaks.length === 0, `${attempts.length} attempts answered ${[...statuses].map(([s, n]) => `${n} x ${s}`).join(', ')}; ${leaks.join('; ') || 'no file content in any answer'}`);
  });

  it('security headers: nosniff everywhere, no X-Powered-By, a CSP on /docs and the portal', async () => {
    const paths = ['/', '/docs', '/docs/', '/docs/static/index.html', '/api/v1/openapi.json', '/api/v1/openapi.yaml', '/healthz', '/readyz', '/metrics', '/nothing', '/problems/not_found'];
    const missing: string[] = [];
    const replies: Array<[string, Reply]> = [];
    for (const path of paths) replies.push([path, await get(`${server.base}${path}`, { agent })]);
    for (const url of ['/api/v1/rate?from=EUR&to=USD', '/api/v1/convert?from=EUR&to=JPY&amount=10', '/api/v1/history?from=USD&to=CHF&range=1m&format=csv']) {
      replies.push([`${url} (key)`, await get(`${server.base}${url}`, { headers: { 'X-Api-Key': key }, agent })]);
      replies.push([`${url} (no key)`, await get(`${server.base}${url}`, { agent })]);
    }
    for (const [path, reply] of replies) {
      if (reply.headers['x-content-type-options'] !== 'nosniff') missing.push(`${path} (${reply.status}): no nosniff`);
      if (reply.headers['x-powered-by'] !== undefined) missing.push(`${path}: X-Powered-By`);
    }
    const docs = replies.find(([path]) => path === '/docs')![1];
    const docsCsp = String(docs.headers['content-security-policy'] ?? '');
    if (!/default-src 'self'/.test(docsCsp) || !/object-src 'none'/.test(docsCsp)) missing.push(`/docs CSP: ${docsCsp || 'none'}`);
    const portal = replies.find(([path]) => path === '/')![1];
    if (portal.status === 200 && !portal.headers['content-security-policy']) missing.push('/ has no CSP');
    check('security headers', missing.length === 0, `${replies.length} responses: nosniff on each, X-Powered-By on none; /docs CSP "${docsCsp.slice(0, 90)}…"; ${missing.join('; ') || 'nothing missing'}`);
  });

  it('request line and header size limits: 16 KiB together, a 431 problem beyond', async () => {
    const probe = async (lineBytes: number, headerBytes: number) => {
      const reply = await rawRequest(
        server.port,
        Buffer.from(`GET /healthz?pad=${'p'.repeat(lineBytes)} HTTP/1.1\r\nHost: x\r\nX-Pad: ${'h'.repeat(headerBytes)}\r\n\r\n`),
      );
      return reply;
    };
    const small = await probe(6_000, 6_000);
    const longLine = await probe(17_000, 10);
    const bigHeader = await probe(10, 17_000);
    const both = await probe(9_000, 9_000);
    const ok =
      small.status === 200 &&
      [longLine, bigHeader, both].every((r) => r.status === 431 && problemDefect(431, r.headers['content-type'], r.body.toString('utf8'), false) === undefined);
    check('size limits', ok, `12 KB of request line and headers: ${small.status}; 17 KB request line: ${longLine.status}; 17 KB header: ${bigHeader.status}; 9 + 9 KB: ${both.status} (Node's 16 KiB max header size, request line included)`);
  });

  it('hostile clients get nothing expensive: bodies, JSON-RPC batches, two Host headers, /metrics', async () => {
    const pid = server.child.pid!;
    const rateOnce = async () => {
      const t0 = performance.now();
      const reply = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { headers: { 'X-Api-Key': key }, agent });
      assert.equal(reply.status, 200);
      return performance.now() - t0;
    };
    const ratesDuring = async (attack: Promise<unknown>) => {
      const times: number[] = [];
      let done = false;
      void attack.finally(() => (done = true));
      while (!done) times.push(await rateOnce());
      await attack;
      return times;
    };
    const quiet: number[] = [];
    for (let i = 0; i < 50; i += 1) quiet.push(await rateOnce());
    const rssBefore = rssMiB(pid);

    // Eight connections each announcing a 200 MB body on a GET and sending 8 MB of it.
    const huge = 200 * 1024 * 1024;
    let bodies: Array<{ status: number; closed: boolean; ms: number }> = [];
    const duringBodies = await ratesDuring(
      Promise.all(
        Array.from({ length: 8 }, () => announceBody(server.port, `GET /api/v1/rate?from=EUR&to=USD HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Length: ${huge}\r\n\r\n`, 8 * 1024 * 1024)),
      ).then((answers) => (bodies = answers)),
    );
    const rssAfterBodies = rssMiB(pid);
    check(
      'request bodies bounded',
      bodies.every((b) => (b.status === 413 || b.status === 0) && b.closed) && bodies.some((b) => b.status === 413),
      `8 parallel GETs announcing 200 MB bodies (8 MB of each sent): ${bodies.filter((b) => b.status === 413).length} × 413 payload_too_large read before the server's reset of the unread body (the rest reset first), ${bodies.filter((b) => b.closed).length} connections closed by the server, the answer read in a median ${median(bodies.filter((b) => b.status === 413).map((b) => b.ms)).toFixed(1)} ms; RSS ${rssBefore.toFixed(0)} → ${rssAfterBodies.toFixed(0)} MiB; others' /rate median ${median(quiet).toFixed(2)} ms quiet, ${median(duringBodies).toFixed(2)} ms meanwhile`,
    );

    // Eight connections sending batches of 100 tools/list on /mcp, without a protocol version and
    // under 2025-03-26, which alone has batches.
    const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })));
    const usage = async () => (JSON.parse((await get(`${server.base}/api/v1/usage`, { headers: { 'X-Api-Key': key } })).body) as { used: number }).used;
    const usedBefore = await usage();
    const statuses = new Map<string, number>();
    let answeredMessages = 0;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'X-Api-Key': key };
    const duringBatches = await ratesDuring(
      Promise.all(
        Array.from({ length: 8 }, async (_, connection) => {
          for (let i = 0; i < 10; i += 1) {
            const versioned: Record<string, string> = connection % 2 === 0 ? {} : { 'mcp-protocol-version': '2025-03-26' };
            const reply = await fetch(`${server.base}/mcp`, { method: 'POST', headers: { ...headers, ...versioned }, body: batch });
            statuses.set(String(reply.status), (statuses.get(String(reply.status)) ?? 0) + 1);
            const answer = (await reply.json()) as unknown;
            if (Array.isArray(answer)) answeredMessages += answer.length;
          }
        }),
      ),
    );
    const usedAfter = await usage();
    check(
      'JSON-RPC batches bounded',
      answeredMessages === 0 && statuses.get('400') === 80 && usedAfter === usedBefore + duringBatches.length,
      `80 batches of 100 tools/list (4.8 KB each) on 8 connections: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}, ${answeredMessages} messages answered, ${usedAfter - usedBefore - duringBatches.length} counted; others' /rate median ${median(duringBatches).toFixed(2)} ms meanwhile`,
    );

    const twoHosts = await rawRequest(server.port, 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n');
    const metrics = await get(`${server.base}/metrics`);
    check(
      'Host and /metrics',
      twoHosts.status === 400 && metrics.status === 404,
      `two Host headers: ${twoHosts.status}; /metrics on the public port without EXRATES_METRICS_PORT or EXRATES_METRICS_TOKEN: ${metrics.status}`,
    );
  });

  it('CORS: any origin may GET with X-Api-Key or a Bearer key; no other method, no cookies, no credentials', async () => {
    const options = (method: string, requestHeaders: string) =>
      send(`${server.base}/api/v1/rate?from=EUR&to=USD`, {
        method: 'OPTIONS',
        agent,
        headers: { Origin: 'https://any.example', 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': requestHeaders },
      });
    const get1 = await get(`${server.base}/api/v1/rate?from=EUR&to=USD`, { agent, headers: { Origin: 'https://any.example', 'X-Api-Key': key } });
    const pre = await options('GET', 'x-api-key');
    const post = await options('POST', 'x-api-key');
    const auth = await options('GET', 'authorization');
    const cookie = await options('GET', 'cookie');
    const methods = String(pre.headers['access-control-allow-methods'] ?? '');
    const allowed = String(pre.headers['access-control-allow-headers'] ?? '');
    const problems: string[] = [];
    if (get1.headers['access-control-allow-origin'] !== '*') problems.push(`GET: allow-origin ${String(get1.headers['access-control-allow-origin'])}`);
    if (!/x-ratelimit-remaining/i.test(String(get1.headers['access-control-expose-headers']))) problems.push('X-RateLimit-Remaining not exposed');
    if (pre.status !== 204 || pre.headers['access-control-allow-origin'] !== '*') problems.push(`preflight ${pre.status}`);
    if (!/^GET, HEAD$/.test(methods)) problems.push(`allow-methods "${methods}"`);
    if (!/(^|, *)X-Api-Key(,|$)/i.test(allowed) || /cookie/i.test(allowed)) problems.push(`allow-headers "${allowed}"`);
    if (/POST/.test(String(post.headers['access-control-allow-methods']))) problems.push('POST allowed');
    // Authorization carries a Bearer key (never a cookie or other ambient credential): allowed.
    if (!/(^|, *)Authorization(,|$)/i.test(String(auth.headers['access-control-allow-headers']))) problems.push('Authorization not allowed');
    if (/cookie/i.test(String(cookie.headers['access-control-allow-headers']))) problems.push('Cookie allowed');
    for (const reply of [get1, pre, post, auth, cookie]) if (reply.headers['access-control-allow-credentials'] !== undefined) problems.push('credentials allowed');
    check('CORS', problems.length === 0, `GET from any origin: allow-origin ${String(get1.headers['access-control-allow-origin'])}; preflight ${pre.status}, allow-methods "${methods}", allow-headers "${allowed}", no Allow-Credentials; ${problems.join('; ') || 'Authorization (a Bearer key) allowed; POST and Cookie not'}`);
  });

  it('keys never reach the log, wherever a client puts them', async () => {
    const placements = [
      { path: `/api/v1/rate?from=EUR&to=USD&apikey=${key}` },
      { path: `/api/v1/rate?from=EUR&to=USD&%61pikey=${key}` },
      { path: `/api/v1/rate?from=EUR&to=USD&ApiKey=${key}` },
      { path: `/api/v1/rate?from=EUR&to=USD&apikey=${key.replace('_', '%5F')}` },
      { path: `/api/v1/rate?apikey=${key}&apikey=${key}&from=EUR&to=USD` },
      { path: `/api/v1/rate?from=${key}&to=USD`, headers: { 'X-Api-Key': key } },
      { path: `/api/v1/${key}` },
      { path: `/nothing/${revoked}?x=${revoked}` },
      { path: '/api/v1/rate?from=EUR&to=USD', headers: { 'X-Api-Key': key } },
      { path: '/api/v1/rate?from=EUR&to=USD', headers: { 'X-Api-Key': revoked } },
      { path: '/api/v1/rate?from=EUR&to=ZZZ', headers: { 'X-Api-Key': key } },
    ];
    const linesSaying = (text: string) => server.output.join('').split('\n').filter((line) => line.includes(text)).length;
    const completedBefore = linesSaying('"request completed"');
    for (const placement of placements) await get(`${server.base}${placement.path}`, { headers: placement.headers ?? {}, agent });
    // The server writes a request's last log line after its answer: wait until every one is written.
    await waitFor(() => linesSaying('"request completed"') >= completedBefore + placements.length, 5_000, 'the last log line of every request').catch(() => undefined);
    const log = server.output.join('');
    const requestLines = linesSaying('"incoming request"');
    const leaked = [key, revoked].filter((k) => log.includes(k.slice(4)));
    check('keys not in this log', leaked.length === 0 && requestLines >= placements.length, `${placements.length} placements (header, query, encoded name, other parameters, path), ${requestLines} request lines logged, key bodies found: ${leaked.length}`);
  });

  it('an unknown and a revoked key take the same time to refuse (PostgreSQL, where a store round trip is visible)', async (t) => {
    if (!(await postgresAvailable())) return t.skip('PostgreSQL not available');
    const schema = await createPostgresSchema();
    const pgSetup: ProcessSetup = { cwd: dir.path, env: { ...baseEnv(schema.url), EXRATES_LOG_REQUESTS: 'false', EXRATES_LOG_LEVEL: 'warn' } };
    let pgServer: Instance | undefined;
    const client = new pg.Client({ connectionString: schema.url });
    try {
      const pgRevoked = await createKey(pgSetup, 'free');
      await revokeKey(pgSetup, pgRevoked);
      recordKeys(SUITE, [pgRevoked]);
      pgServer = await startInstance('security-pg', pgSetup);
      await client.connect();
      // Fresh keys, never seen by the server: each costs a store lookup the first time.
      const ROUNDS = 300;
      const fresh = () => `exr_${randomBytes(32).toString('base64').replace(/[^0-9A-Za-z]/g, '').padEnd(32, 'x').slice(0, 32)}`;
      const freshUnknown = Array.from({ length: ROUNDS }, fresh);
      const freshRevoked = Array.from({ length: ROUNDS }, fresh);
      for (let i = 0; i < freshRevoked.length; i += 100) {
        const batch = freshRevoked.slice(i, i + 100);
        const values = batch.map((_, j) => `($${j * 3 + 1}, $${j * 3 + 2}, $${j * 3 + 3}, 'free', 'timing@example.org', '2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z')`).join(', ');
        await client.query(
          `insert into api_keys (id, prefix, hash, tier, owner, created_at, revoked_at) values ${values}`,
          batch.flatMap((k) => [randomBytes(16).toString('hex'), k.slice(0, 12), createHash('sha256').update(k).digest('hex')]),
        );
      }
      const repeatedUnknown = fresh();
      const timingAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const times: Record<string, number[]> = { 'unknown, repeated': [], 'revoked, repeated': [], 'unknown, first time': [], 'revoked, first time': [] };
      const bodies = new Set<string>();
      const url = `${pgServer.base}/api/v1/rate?from=EUR&to=USD`;
      // Warm up the connection and the code paths.
      for (let i = 0; i < 50; i += 1) await get(url, { headers: { 'X-Api-Key': i % 2 ? pgRevoked : repeatedUnknown }, agent: timingAgent });
      for (let round = 0; round < ROUNDS; round += 1) {
        const order: Array<[string, string]> = [
          ['unknown, repeated', repeatedUnknown],
          ['revoked, repeated', pgRevoked],
          ['unknown, first time', freshUnknown[round]!],
          ['revoked, first time', freshRevoked[round]!],
        ];
        // A different order each round, so drift and ordering effects fall on every class alike.
        order.sort(() => (randomBytes(1)[0]! < 128 ? -1 : 1));
        for (const [label, presented] of order) {
          const reply = await get(url, { headers: { 'X-Api-Key': presented }, agent: timingAgent });
          if (reply.status !== 401) throw new Error(`${label}: ${reply.status}`);
          bodies.add(reply.body);
          times[label]!.push(reply.ms);
        }
      }
      timingAgent.destroy();
      const m = Object.fromEntries(Object.entries(times).map(([label, values]) => [label, median(values)])) as Record<string, number>;
      // What a store round trip costs, seen from the client: the first lookup of a key against a cached one.
      const roundTrip = m['unknown, first time']! - m['unknown, repeated']!;
      const tolerance = Math.max(0.05, roundTrip / 2);
      const repeatedGap = Math.abs(m['revoked, repeated']! - m['unknown, repeated']!);
      const firstGap = Math.abs(m['revoked, first time']! - m['unknown, first time']!);
      const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
      figures.push(['401 medians (PostgreSQL, ' + ROUNDS + ' interleaved rounds)', Object.entries(m).map(([label, ms]) => `${label} ${fmt(ms)}`).join(', ')]);
      check('a store round trip is visible', roundTrip >= 0.1, `first lookup minus cached lookup: ${fmt(roundTrip)} (the method can see a difference this size)`);
      check('unknown and revoked take the same time', repeatedGap <= tolerance && firstGap <= tolerance && bodies.size === 1, `gap when repeated ${fmt(repeatedGap)}, on first use ${fmt(firstGap)}, tolerance ${fmt(tolerance)} (half a round trip); ${bodies.size} distinct body`);
    } finally {
      await client.end().catch(() => undefined);
      if (pgServer) {
        await stopInstance(pgServer);
        saveLog(SUITE, 'postgres', pgServer);
      }
      await schema.drop();
    }
  });
});
