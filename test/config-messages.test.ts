/** Configuration errors and warnings as a person reads them: in words, never a regular expression. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ConfigSchema, loadConfig, PROVIDER_IDS, PROVIDER_NAMES, RATES_SETTINGS, SERVING_SETTINGS, unknownVariables } from '../src/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

test('a bad provider list is described in words, with what was given', () => {
  assert.deepEqual(PROVIDER_IDS.slice(0, 5), ['ecb', 'nbu', 'nbp', 'cnb', 'boc']);
  // A provider, or a family of them (the parities).
  assert.deepEqual(PROVIDER_NAMES, [...PROVIDER_IDS, 'peg']);
  assert.deepEqual(problems({ EXRATES_PROVIDERS: 'nope' }), [
    `EXRATES_PROVIDERS: expected a comma-separated list of ${PROVIDER_NAMES.join(', ')}; got 'nope'`,
  ]);
});

test('no message about a variable with a pattern shows the pattern', () => {
  const properties = ConfigSchema.properties as unknown as Record<string, { pattern?: string }>;
  const patterned = Object.entries(properties).filter(([, schema]) => typeof schema.pattern === 'string');
  assert.ok(patterned.length >= 8);
  for (const [name, schema] of patterned) {
    const said = problems({ [name]: 'not valid at all' });
    assert.equal(said.length, 1, `${name}: ${said.join(' | ')}`);
    assert.match(said[0]!, new RegExp(`^${name}: expected [^^$\\\\]+; got `));
    assert.ok(!said[0]!.includes(schema.pattern!), said[0]);
  }
});

test('a secret is never echoed', () => {
  assert.deepEqual(problems({ EXRATES_OXR_APP_ID: 'short' }), ['EXRATES_OXR_APP_ID: expected 8 to 64 letters and digits; got a value (hidden)']);
});

test('spaces after the commas of the provider list are accepted', () => {
  assert.deepEqual(loadConfig({ EXRATES_PROVIDERS: 'ecb, frankfurter' }).providers, ['ecb', 'frankfurter']);
  assert.deepEqual(loadConfig({ EXRATES_PROVIDERS: ' file ,ecb', EXRATES_FILE_URL: 'x.csv' }).providers, ['file', 'ecb']);
  assert.deepEqual(problems({ EXRATES_PROVIDERS: 'ecb, ecb' }), ["EXRATES_PROVIDERS: names a provider twice; got 'ecb, ecb'"]);
});

test('an EXRATES_ variable the service does not read is named with the nearest one it does', () => {
  assert.deepEqual(unknownVariables({ EXRATES_PROVIDER: 'file', EXRATES_LOG_LEVELS: 'debug', EXRATES_PROVIDERS: 'ecb', PATH: '/bin' }), [
    'EXRATES_LOG_LEVELS is not a setting of exrates (did you mean EXRATES_LOG_LEVEL?); it is ignored',
    'EXRATES_PROVIDER is not a setting of exrates (did you mean EXRATES_PROVIDERS?); it is ignored',
  ]);
  // The key a client reads and the test suite's own settings are not typos.
  assert.deepEqual(unknownVariables({ EXRATES_KEY: 'x', EXRATES_TEST_POSTGRES_URL: 'x', EXRATES_REQUIRE_SERVICES: '1' }), []);
});

test('a setting given the prefix it does not take, or compose\'s published port, is named with the setting the service reads', () => {
  assert.deepEqual(unknownVariables({ EXRATES_HOST: '127.0.0.1', EXRATES_PORT: '8081' }), [
    'EXRATES_HOST is not a setting of exrates (did you mean HOST?); it is ignored',
    'EXRATES_PORT is the port compose.yaml publishes on the host, which the service itself does not read: it listens on PORT',
  ]);
});

test('the error names each bad setting on a line of its own, with no heading line', () => {
  const messageOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    return '';
  };
  assert.equal(messageOf({ EXRATES_QUOTA_FREE: 'zero' }), "invalid configuration: EXRATES_QUOTA_FREE: expected a whole number of at least 1; got 'zero'");
  assert.deepEqual(messageOf({ PORT: 'x', EXRATES_QUOTA_PRO: '0' }).split('\n').sort(), [
    "invalid configuration: EXRATES_QUOTA_PRO: expected a whole number of at least 1; got '0'",
    "invalid configuration: PORT: expected a whole number from 0 to 65535; got 'x'",
  ]);
});

test('a whole-number setting is refused unless written in decimal digits, not truncated or read as hex or an exponent', () => {
  for (const text of ['1.5', '0x10', '1e3', '+5', '-1', ' 7']) {
    assert.throws(
      () => loadConfig({ EXRATES_QUOTA_FREE: text }),
      (error: unknown) => error instanceof ConfigError && error.message === `invalid configuration: EXRATES_QUOTA_FREE: expected a whole number of at least 1; got '${text}'`,
      text,
    );
  }
  assert.equal(loadConfig({ EXRATES_QUOTA_FREE: '250', PORT: '0' }).quota.free, 250);
});

test('in a provider list, the entries that are not providers are named first', () => {
  const expected = `expected a comma-separated list of ${PROVIDER_NAMES.join(', ')}`;
  assert.deepEqual(problems({ EXRATES_PROVIDERS: 'ecb,nosuch' }), [`EXRATES_PROVIDERS: 'nosuch' is not a provider; ${expected}; got 'ecb,nosuch'`]);
  assert.deepEqual(problems({ EXRATES_PROVIDERS: 'ecbb, nbu,,frank' }), [`EXRATES_PROVIDERS: 'ecbb', an empty entry, 'frank' are not providers; ${expected}; got 'ecbb, nbu,,frank'`]);
});

test('settings the caller does not read are neither checked nor taken', () => {
  const env = { PORT: 'abc', EXRATES_PROVIDERS: 'ecb,nosuch', EXRATES_NOW: '2026-03-06T12:00:00Z' };
  const config = loadConfig(env, { unused: [...SERVING_SETTINGS, ...RATES_SETTINGS, 'EXRATES_NOW'] });
  assert.equal(config.port, 8080);
  assert.equal(config.now, undefined);
  assert.deepEqual(config.providers, loadConfig({}).providers);
  // Whoever reads them still hears of each.
  assert.deepEqual(problems(env).map((line) => line.split(':')[0]).sort(), ['EXRATES_PROVIDERS', 'PORT']);
  assert.ok(SERVING_SETTINGS.every((name) => name in ConfigSchema.properties) && RATES_SETTINGS.every((name) => name in ConfigSchema.properties));
});

test('EXRATES_HISTORY_YEARS is a whole number of years from 1 to 100, or all; anything else is named with what was given', () => {
  assert.equal(loadConfig({}).historyYears, 5);
  assert.equal(loadConfig({ EXRATES_HISTORY_YEARS: '12' }).historyYears, 12);
  assert.equal(loadConfig({ EXRATES_HISTORY_YEARS: '100' }).historyYears, 100);
  assert.equal(loadConfig({ EXRATES_HISTORY_YEARS: 'all' }).historyYears, 'all');
  for (const text of ['0', '101', '5.5', '05', '-1', '1e1', 'ALL', 'max', 'forever', ' 5']) {
    assert.deepEqual(problems({ EXRATES_HISTORY_YEARS: text }), [`EXRATES_HISTORY_YEARS: expected a whole number of years from 1 to 100, or all; got '${text}'`], text);
  }
});
