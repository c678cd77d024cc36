/**
 * MCP's errors are the API's: for each fault a tool's arguments can have, the tool error's
 * structured content is the problem the API answers for the same parameters, code and wording;
 * only what has no API counterpart (a JSON number whose digits may be lost, a tool that does not
 * exist) has its own, and the latter's JSON-RPC message carries no "MCP error" prefix of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helper.js';

describe('MCP tool errors, worded as the API\'s for the same fault', () => {
  let test: TestApp;

  before(async () => {
    test = await createTestApp();
  });

  after(async () => {
    await test?.close();
  });

  async function rpc(name: string, args: Record<string, unknown>): Promise<{ result?: { isError?: boolean; content: Array<{ text: string }>; structuredContent: Record<string, unknown> }; error?: { code: number; message: string } }> {
    const response = await test.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'x-api-key': test.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    assert.equal(response.statusCode, 200);
    return JSON.parse(response.body) as never;
  }

  const rest = async (url: string) => {
    const response = await test.app.inject({ url, headers: { 'x-api-key': test.key } });
    assert.ok(response.statusCode >= 400, `${url} is refused by the API`);
    return JSON.parse(response.body) as Record<string, unknown>;
  };

  const SAME_FAULT: Array<[string, Record<string, unknown>, string]> = [
    ['convert', { from: 'EUR', to: 'USD', amount: -5 }, '/api/v1/convert?from=EUR&to=USD&amount=-5'],
    ['convert', { from: 'EUR', to: 'USD', amount: -0.5 }, '/api/v1/convert?from=EUR&to=USD&amount=-0.5'],
    ['convert', { from: 'EUR', to: 'USD', amount: 1e21 }, '/api/v1/convert?from=EUR&to=USD&amount=1e%2B21'],
    ['convert', { from: 'EUR', to: 'USD', amount: '-5' }, '/api/v1/convert?from=EUR&to=USD&amount=-5'],
    ['convert', { from: 'EUR', to: 'USD', amount: '1,5' }, '/api/v1/convert?from=EUR&to=USD&amount=1,5'],
    ['convert', { from: 'EUR', to: 'USD' }, '/api/v1/convert?from=EUR&to=USD'],
    ['get_rate', { from: 'EUR', to: 5 }, '/api/v1/rate?from=EUR&to=5'],
    ['get_rate', { from: 'EUR', to: 'USD', date: '2019-01-01' }, '/api/v1/rate?from=EUR&to=USD&date=2019-01-01'],
    ['get_rate', { from: 'EUR', to: 'USD', source: 'nosuch' }, '/api/v1/rate?from=EUR&to=USD&source=nosuch'],
    ['get_history', { from: 'EUR', to: 'USD', range: '2y' }, '/api/v1/history?from=EUR&to=USD&range=2y'],
    ['get_rates', { from: 'EUR', to: 'USD,XXX' }, '/api/v1/rates?from=EUR&to=USD,XXX'],
  ];

  it('answers each fault with the API\'s problem: the same code, detail and param', async () => {
    for (const [name, args, url] of SAME_FAULT) {
      const answer = await rpc(name, args);
      const problem = await rest(url);
      assert.equal(answer.result?.isError, true, JSON.stringify(args));
      assert.deepEqual(answer.result.structuredContent, problem, `${name} ${JSON.stringify(args)} as ${url}`);
      assert.equal(answer.result.content[0]!.text, `${String(problem.code)}: ${String(problem.detail)}`);
    }
  });

  it('says "non-negative" of a negative amount, not that the number may have lost digits', async () => {
    const answer = await rpc('convert', { from: 'EUR', to: 'USD', amount: -5 });
    assert.match(answer.result!.content[0]!.text, /^invalid_amount: amount must be given once, as a non-negative decimal/);
    assert.doesNotMatch(answer.result!.content[0]!.text, /may not be the number written/);
  });

  it('refuses a JSON number whose digits may have been lost with a reason of its own, the API having no such number', async () => {
    const answer = await rpc('convert', { from: 'EUR', to: 'USD', amount: 1234567890123456.7 });
    assert.equal(answer.result!.structuredContent.code, 'invalid_amount');
    assert.match(String(answer.result!.structuredContent.detail), /may not be the number written; send it as a decimal string/);
  });

  it('answers an unknown tool with the JSON-RPC error -32602, its message without a code prefix of its own', async () => {
    const answer = await rpc('get_weather', {});
    assert.deepEqual(answer.error, { code: -32602, message: "No tool 'get_weather': tools/list names them." });
  });
});
