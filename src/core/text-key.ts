/**
 * A number computed from a text's characters, for maps that would otherwise be looked up by a
 * string a request brought: V8 interns such a string first, on every lookup, and a number it does
 * not. Two texts may share a number, so an entry found by it keeps its text to compare.
 *
 * FNV-1a, cut to 30 bits so that V8 keeps the result as a small integer. Written here: a map's
 * key needs no more, and node:crypto's hashes cost more than the lookup they would spare.
 */
export function textKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/**
 * A map by text, found through textKey and then compared: what a cache keyed by a request's
 * strings uses. Two texts with one text key take turns in its slot. Holding `max` texts, it is
 * emptied before it takes another.
 */
export class TextKeyedMap<V> {
  readonly #slots = new Map<number, { text: string; value: V }>();

  constructor(readonly max = Infinity) {}

  /** The texts held. */
  get size(): number {
    return this.#slots.size;
  }

  get(text: string): V | undefined {
    const held = this.#slots.get(textKey(text));
    return held !== undefined && held.text === text ? held.value : undefined;
  }

  set(text: string, value: V): void {
    if (this.#slots.size >= this.max) this.#slots.clear();
    this.#slots.set(textKey(text), { text, value });
  }
}
