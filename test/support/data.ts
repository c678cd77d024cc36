/** The shared data the suites read in place, and the fixed clock that makes its last day "latest". */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shared data folder beside the repository, read in place. */
export const SHARED_DATA = fileURLToPath(new URL('../../../shared/data/', import.meta.url));
export const ECB_CSV = join(SHARED_DATA, 'ecb', 'eurofxref-hist.csv');
export const ECB_XML_DIR = join(SHARED_DATA, 'ecb', 'xml');
/** Just after the last day of the shared ECB history (2026-03-05). */
export const FIXED_NOW = '2026-03-06T12:00:00Z';
