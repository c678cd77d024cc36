/**
 * The request target as the routes see it, one form for each resource (RFC 9112 §3.2, RFC 3986
 * §6.2.2): the absolute-form `http://host/api/v1/rate?…` that a server must accept is its path and
 * query, and a percent-encoded letter, digit, `-`, `_` or `~` in the path (`/%61pi/…`) is that
 * character. So a request under /api/ is known as one (routed, and counted against its key)
 * however its target is written. A `.` stays encoded, so that no dot-segment is made here; the
 * query is left as sent (its parser decodes it).
 */
export function normalTarget(url: string): string {
  let target = url;
  if (target.charCodeAt(0) !== 47 /* / */) {
    const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
    if (origin) {
      target = target.slice(origin[0].length);
      if (!target.startsWith('/')) target = `/${target}`;
    }
  }
  const query = target.indexOf('?');
  const path = query < 0 ? target : target.slice(0, query);
  if (!path.includes('%')) return target;
  const decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const character = String.fromCharCode(Number.parseInt(hex, 16));
    return /^[A-Za-z0-9_~-]$/.test(character) ? character : escape;
  });
  return query < 0 ? decoded : decoded + target.slice(query);
}
