/**
 * The EXRATES_* variables of a test service, written once for the in-process apps (through
 * loadConfig) and for the processes the suites spawn. Two sources of rates: the shared ECB
 * history through the file provider, or the fake upstreams.
 */
import { ECB_CSV, FIXED_NOW } from './data.js';
import { FEEDS_NOW, type FakeUpstreams } from './upstreams.js';

/** The shared ECB history through the file provider, with the clock just after its last day. */
export function sharedHistoryVars(): Record<string, string> {
  return { EXRATES_PROVIDERS: 'file', EXRATES_FILE_URL: ECB_CSV, EXRATES_NOW: FIXED_NOW };
}

/** ECB and Frankfurter from the fakes, with the clock the fakes' documents are dated for. */
export function fakeUpstreamVars(fake: FakeUpstreams): Record<string, string> {
  return {
    EXRATES_PROVIDERS: 'ecb,frankfurter',
    ...fake.env(),
    EXRATES_NOW: FEEDS_NOW,
    // Generous, so a loaded machine does not turn a healthy answer into a timeout; hang tests set their own.
    EXRATES_UPSTREAM_TIMEOUT_MS: '5000',
  };
}

/**
 * The whole environment of a spawned service: PATH and HOME from ours and nothing else, so no
 * EXRATES_* variable of the developer's shell leaks in. Logs at info, so a suite can read them.
 */
export function processEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, EXRATES_LOG_LEVEL: 'info', ...vars };
}
