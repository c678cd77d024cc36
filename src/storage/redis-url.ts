/** A Redis location, read at configuration time (without loading ioredis) and when connecting. */

/** Where Redis is: one server, or the seed nodes of a cluster, with the credentials and TLS of every node. */
export interface RedisTarget {
  cluster: boolean;
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

/**
 * `redis://` and `rediss://` name one server; `redis+cluster://[user:password@]host:port,host:port`
 * (`rediss+cluster://` for TLS) names seed nodes of a Redis Cluster, from which the client learns
 * the rest. Written by hand: WHATWG URL parsing takes one host only, and ioredis's own parser
 * serves the one-server form.
 */
export function parseRedisUrl(url: string): RedisTarget {
  const match = /^(rediss?)(\+cluster)?:\/\/(?:([^@/]*)@)?([^/?#]+)/.exec(url);
  if (!match) throw new Error('a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL is needed');
  const [, scheme, cluster, auth, hosts] = match;
  const nodes = hosts!.split(',').map((node) => {
    const at = node.lastIndexOf(':');
    const host = at > 0 ? node.slice(0, at) : node;
    const port = at > 0 ? Number(node.slice(at + 1)) : 6379;
    if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`"${node}" is not host:port`);
    return { host: host.replace(/^\[(.*)\]$/, '$1'), port };
  });
  if (!cluster && nodes.length > 1) throw new Error('several nodes are for a cluster: redis+cluster://host:port,host:port');
  const target: RedisTarget = { cluster: cluster !== undefined, nodes, tls: scheme === 'rediss' };
  if (auth) {
    const colon = auth.indexOf(':');
    const username = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : '');
    const password = decodeURIComponent(colon >= 0 ? auth.slice(colon + 1) : auth);
    if (username) target.username = username;
    if (password) target.password = password;
  }
  return target;
}
