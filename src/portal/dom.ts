/** The page's element of this id: every id the modules name is in index.html, so a missing one is a bug said at once. */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no element #${id}`);
  return element as T;
}
