/**
 * The container files, checked without a container engine: what compose would interpolate, and
 * what the Docker build context holds against what the Dockerfile copies.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from './support/processes.js';

const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');

test('compose.yaml refuses to start without POSTGRES_PASSWORD instead of defaulting to a known one', () => {
  const text = read('compose.yaml');
  const document = parse(text) as { services: Record<string, { environment?: Record<string, string> }> } & Record<string, unknown>;
  const uses = [
    (document['x-exrates-environment'] as Record<string, string>).EXRATES_DATABASE_URL!,
    document.services.postgres!.environment!.POSTGRES_PASSWORD!,
  ];
  for (const value of uses) assert.match(value, /\$\{POSTGRES_PASSWORD:\?[^}]+\}/, value);
  // Every reference in the file, commented or not: compose's ${VAR:-default} and ${VAR-default} forms give a default.
  const references = [...text.matchAll(/\$\{POSTGRES_PASSWORD([^}]*)\}/g)].map((m) => m[1]!);
  assert.ok(references.length >= 2);
  for (const rest of references) assert.match(rest, /^:\?.+/, `\${POSTGRES_PASSWORD${rest}}`);
  assert.doesNotMatch(text, /change-me/);
});

test(".dockerignore's comment names exactly what the Dockerfile copies from the build context, and none of it is ignored", () => {
  const copied = read('Dockerfile')
    .split('\n')
    .filter((line) => line.startsWith('COPY ') && !line.includes('--from='))
    .flatMap((line) => line.split(/\s+/).slice(1, -1))
    .sort();
  assert.deepEqual(copied, ['package-lock.json', 'package.json', 'scripts/build.mjs', 'src', 'tsconfig.json']);
  const ignore = read('.dockerignore').split('\n');
  const comment = ignore.filter((line) => line.startsWith('#')).map((line) => line.replace(/^#\s*/, '')).join(' ');
  const named = /copies (.+?) \(see the Dockerfile\)/.exec(comment)?.[1]?.split(/,\s*|\s+and\s+|\s+/).filter(Boolean).map((name) => name.replace(/\/$/, ''));
  assert.deepEqual(named?.sort(), copied, comment);
  const patterns = ignore.filter((line) => line.trim() !== '' && !line.startsWith('#'));
  for (const path of copied) {
    // As Docker reads it: the last pattern that matches the path or a folder above it decides, and
    // one that starts with ! lets the path in again.
    const within = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    const deciding = patterns.findLast((pattern) => within.some((part) => matchesGlob(part, pattern.replace(/^!/, ''))));
    assert.ok(deciding === undefined || deciding.startsWith('!'), `${path} is ignored by ${deciding}`);
  }
});
