/** What scripts/soak.ts takes from the test support modules, under the path it imports. */
export { get } from '../support/http.js';
export { ensureBuilt, isRunning, startInstance, stopInstance } from '../support/processes.js';
export { sleep } from '../support/wait.js';
