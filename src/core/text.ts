/**
 * An integer with its thousands grouped by commas (39,356). Not toLocaleString: its first use maps
 * megabytes of ICU's locale data into the process for good, for a start-time string.
 */
export function grouped(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** A count with its unit, grouped and singular for one (1 day, 6,958 days, 0 rates). */
export function counted(value: number, unit: string): string {
  return `${grouped(value)} ${unit}${value === 1 ? '' : 's'}`;
}
