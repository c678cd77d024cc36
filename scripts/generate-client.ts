/**
 * Writes client/schema.d.ts from the OpenAPI document: the one a default service serves, or with
 * `--from <base URL>` the one a running service serves.
 */
import { writeFileSync } from 'node:fs';
import { CLIENT_SCHEMA, renderClientSchema, servedDocument } from './client-schema.js';

const fromIndex = process.argv.indexOf('--from');
let document: unknown;
if (fromIndex >= 0) {
  const base = process.argv[fromIndex + 1];
  if (!base) throw new Error('--from needs the base URL of a running service, e.g. http://localhost:8080');
  const response = await fetch(new URL('/api/v1/openapi.json', base));
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}`);
  document = await response.json();
} else {
  document = await servedDocument();
}
writeFileSync(CLIENT_SCHEMA, await renderClientSchema(document));
console.log(`wrote ${CLIENT_SCHEMA}`);
