/**
 * Writes docs/configuration.md from the configuration schema, or with --check fails when the
 * committed file differs from what the schema says.
 */
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from './generated-file.js';
import { ConfigSchema } from '../src/config.js';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

export function renderConfigurationDoc(): string {
  const properties = ConfigSchema.properties as unknown as Record<string, { description?: string; default?: unknown }>;
  const required = new Set<string>((ConfigSchema as unknown as { required?: string[] }).required ?? []);
  const rows = Object.entries(properties).map(([name, schema]) => {
    const fallback = schema.default !== undefined ? `\`${String(schema.default)}\`` : required.has(name) ? '(required)' : '(unset)';
    return `| \`${name}\` | ${fallback} | ${schema.description ?? ''} |`;
  });
  return [
    '# Configuration',
    '',
    'exrates reads its configuration from environment variables, and from a `.env` file in the working directory when there is one (the real environment wins). Every value is checked at start; a bad one stops the start with one line per problem.',
    '',
    'This file is generated from the configuration schema in `src/config.ts` by `npm run docs:config`; `npm run lint` fails when it is out of date.',
    '',
    '| Variable | Default | Meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

writeOrCheck(target, renderConfigurationDoc(), 'npm run docs:config');
