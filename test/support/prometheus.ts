/** Reading the service's /metrics text in tests. */

/**
 * Prometheus text → sample values keyed by name and labels sorted by label name, e.g.
 * `exrates_refresh_total{outcome="failure",provider="ecb"}`.
 */
export function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, name, value]) => `${name}="${value}"`)
      .sort();
    samples.set(labels.length > 0 ? `${match[1]}{${labels.join(',')}}` : match[1]!, Number(match[3]));
  }
  return samples;
}

/** The key parseMetrics uses for a sample. */
export function sampleKey(name: string, labels: Record<string, string> = {}): string {
  const parts = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  return parts.length > 0 ? `${name}{${parts.join(',')}}` : name;
}
