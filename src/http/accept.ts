import { LRUCache } from 'lru-cache';
import { DomainError } from '../core/errors.js';

/** How a media range names a type: 2 exactly, 1 as `type/*`, 0 as `*\/*`, -1 not at all. */
function specificity(range: string, type: string): number {
  if (range === type) return 2;
  if (range === '*/*') return 0;
  return range.endsWith('/*') && type.startsWith(range.slice(0, -1)) ? 1 : -1;
}

/**
 * The offered media type an Accept header prefers (RFC 9110 §12.5.1), or undefined when it admits
 * none of them. Each type takes the q-value of the most specific range naming it; the highest q
 * wins, then a type named exactly over one reached by a wildcard, then the earlier offered. No
 * Accept (or an empty one) takes the first offered.
 *
 * Written by hand: @fastify/accept-negotiator, which picks the encoding, knows tokens only, and
 * `negotiator` breaks a tie by the order of the Accept header, where this service's rule (JSON
 * first, tests pin it) is the order offered; it also reads an empty Accept as admitting nothing.
 */
export function preferredType<Type extends string>(accept: string | undefined, offered: readonly Type[]): Type | undefined {
  if (accept === undefined || accept.trim() === '') return offered[0];
  const ranges = accept.split(',').flatMap((part) => {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return range === '' || !Number.isFinite(q) ? [] : [{ range, q }];
  });
  let best: Type | undefined;
  let bestQ = 0;
  let bestExact = false;
  for (const type of offered) {
    let named = -1;
    let q = 0;
    for (const range of ranges) {
      const found = specificity(range.range, type);
      if (found > named) [named, q] = [found, range.q];
    }
    if (q > bestQ || (q > 0 && q === bestQ && named === 2 && !bestExact)) [best, bestQ, bestExact] = [type, q, named === 2];
  }
  return best;
}

/** Accept headers longer than this are read anew each time, never kept. */
const LONGEST_KEPT = 256;

/**
 * `preferredType` for one list of offered types, each Accept header's answer worked out once:
 * clients send few distinct Accept headers, and reading one costs more than the rest of answering
 * from a cached body. At most `max` headers are kept, the least recently used going first.
 */
export function createTypeChooser<Type extends string>(offered: readonly Type[], max = 1_000): (accept: string | undefined) => Type | undefined {
  // Wrapped: the cache keeps no undefined, the answer when nothing offered is admitted.
  const chosen = new LRUCache<string, { type: Type | undefined }>({ max });
  return (accept) => {
    if (accept === undefined || accept.length > LONGEST_KEPT) return preferredType(accept, offered);
    let held = chosen.get(accept);
    if (held === undefined) chosen.set(accept, (held = { type: preferredType(accept, offered) }));
    return held.type;
  };
}

/** The 406 of a request whose Accept admits none of what its endpoint sends. */
export function notAcceptable(offered: readonly string[]): DomainError {
  return new DomainError('not_acceptable', `The Accept header admits none of what this endpoint sends: ${offered.join(', ')}.`);
}
