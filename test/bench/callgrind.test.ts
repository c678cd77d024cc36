import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readPerfMap, selfCosts } from '../../bench/callgrind.js';
import { tempDir } from '../support/stores.js';

// A callgrind file as callgrind writes one (names compressed to ids after their first use), with
// JIT code at two addresses; a cost line after `calls=` is the callee's inclusive cost.
const CALLGRIND = `version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 0

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) Builtins_RegExpPrototypeTestFast
0 10
cfn=(2) 0x0000000000001008
calls=1 0
0 50
fn=(2)
0 30
+1 5
fn=(3) 0x0000000000002010
* 7
cfn=(1)
calls=2 0
0 3
fn=(1)
-1 2

totals: 54
`;

test('self cost per function, the JIT code named from the perf map, calls counted to the callee only', () => {
  const dir = tempDir('exrates-callgrind-');
  try {
    const map = join(dir.path, 'perf-1.map');
    writeFileSync(map, "1000 100 JS:*'respond file:///x/commands.js:1:1\n3000 10 JS:*'send file:///x/commands.js:9:1\n");
    const nameOf = readPerfMap(map);
    assert.equal(nameOf(0x3009), "JS:*'send file:///x/commands.js:9:1");
    assert.equal(nameOf(0x300f), "JS:*'send file:///x/commands.js:9:1", 'sizes are hex too');
    assert.equal(nameOf(0x3010), undefined, 'past the end of the last entry');
    assert.equal(nameOf(0x0fff), undefined, 'before the first');
    // Code freed and its addresses used again: the later line names what runs there now.
    writeFileSync(map, "2000 40 JS:*'old file:///x/a.js:1:1\n1000 10 JS:*'other file:///x/a.js:2:1\n2010 8 JS:*'new file:///x/a.js:3:1\n");
    const reused = readPerfMap(map);
    assert.equal(reused(0x2012), "JS:*'new file:///x/a.js:3:1");
    assert.equal(reused(0x2008), "JS:*'old file:///x/a.js:1:1", 'what the later code does not cover');
    assert.equal(reused(0x2020), "JS:*'old file:///x/a.js:1:1");
    const costs = selfCosts(CALLGRIND, nameOf);
    assert.deepEqual(Object.fromEntries(costs), {
      Builtins_RegExpPrototypeTestFast: 12,
      "JS:*'respond file:///x/commands.js:1:1": 35,
      'JIT code without a name': 7,
    });
    assert.equal([...costs.values()].reduce((sum, cost) => sum + cost, 0), 54, 'the self costs add up to the totals line');
  } finally {
    dir.remove();
  }
});
