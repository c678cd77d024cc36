import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callCosts, TIMED_PHASES } from '../../bench/callgrind.js';

// A dump as callgrind writes one (two events, names compressed after their first use, a trailing
// zero left out): uv_run calls the timers (by two ids of the same name), the poll phase twice and
// the immediates once.
const DUMP = `version: 1
positions: line
events: Ir DLmw
thread: 1

fn=(1) uv_run
0 40 2
cfn=(2) uv__run_timers
calls=1 0
* 1000 10
cfn=(3) uv__io_poll
calls=3 0
* 5000 50
cfn=(4) uv__run_check
calls=1 0
* 300
cfn=(5) uv__run_timers
calls=1 0
+2 70 1
cfn=(3)
calls=1 0
* 7 0
fn=(2)
0 1000 10
fn=(5)
0 70 1

totals: 6417 63
`;

test('callCosts sums the inclusive costs of the calls to the functions named, by name or by id', () => {
  assert.deepEqual(callCosts(DUMP, new Set(['uv__run_check']), 2), [300, 0]);
  assert.deepEqual(callCosts(DUMP, new Set(['uv__io_poll']), 2), [5007, 50]);
  assert.deepEqual(callCosts(DUMP, TIMED_PHASES, 2), [1370, 11]);
  assert.deepEqual(callCosts(DUMP, new Set(['uv__nothing']), 2), [0, 0]);
});
