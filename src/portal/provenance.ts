/**
 * Where the shown rate comes from, in one line, and, opened, the published numbers it was
 * computed from and any the cross-check set aside or flagged.
 */
import { $ } from './dom.js';
import { formatDay, formatDecimal } from './format.js';
import { providerName } from './sources.js';
import type { Conversion, PublishedNumber, SetAsideNumber } from './types.js';

/** One published number as the provider wrote it: a reciprocal (stored as `1/<x>`) is shown the way round it was published. */
function publishedNumber(n: PublishedNumber): string {
  const reciprocalOf = n.reciprocalOf ?? (n.rate.startsWith('1/') ? n.rate.slice(2) : undefined);
  return reciprocalOf !== undefined ? `1 ${n.currency} = ${formatDecimal(reciprocalOf)} ${n.base}` : `1 ${n.base} = ${formatDecimal(n.rate)} ${n.currency}`;
}

/**
 * The numbers of preferred providers that the cross-check set aside (provenance.setAside), and the
 * numbers used that it flagged all the same (provenance.flagged): said beside the source, and,
 * opened, each with the API's reason.
 */
function showSetAside(setAside: SetAsideNumber[], flagged: SetAsideNumber[]): void {
  const flag = $('provenance-flag');
  const list = $('provenance-set-aside');
  const count = (n: number, what: string) => (n === 0 ? [] : [`${n === 1 ? 'a number' : `${n} numbers`} ${what}`]);
  const said = [...count(setAside.length, 'set aside'), ...count(flagged.length, 'flagged')];
  flag.textContent = said.length === 0 ? '' : ` · ${said.join(', ')}`;
  flag.hidden = said.length === 0;
  const itemOf = (lead: string) => (n: SetAsideNumber) => {
    const item = document.createElement('li');
    const day = document.createElement('time');
    day.dateTime = n.day;
    day.textContent = formatDay(n.day);
    item.append(`${lead}: ${providerName(n.provider)}’s ${publishedNumber(n)} on `, day, ` — ${n.reason}`);
    return item;
  };
  list.replaceChildren(...setAside.map(itemOf('Not used')), ...flagged.map(itemOf('Used, though flagged')));
  list.hidden = said.length === 0;
}

/**
 * Where the shown rate comes from, in one line ("European Central Bank, Mar 5, 2026, through
 * EUR"), and, opened, the published numbers it was computed from. "Through" names the currency a
 * cross is taken through: the bridge between two providers, or one provider's base when neither
 * currency of the pair is that base.
 */
export function showProvenance(body: Conversion): void {
  const box = $('provenance');
  const p = body.provenance;
  if (!p || p.providers.length === 0) {
    box.hidden = true;
    return;
  }
  const base = p.numbers[0]?.base;
  const through = p.bridge ?? (base && body.from !== base && body.to !== base ? base : null);
  const day = document.createElement('time');
  day.dateTime = p.day;
  day.textContent = formatDay(p.day);
  const line = $('provenance-line');
  line.replaceChildren(`${p.providers.map(providerName).join(' and ')}, `, day, through ? `, through ${through}` : '');
  const several = p.providers.length > 1;
  $('provenance-numbers').replaceChildren(
    ...p.numbers.map((n) => {
      const item = document.createElement('li');
      item.textContent = several ? `${publishedNumber(n)} (${providerName(n.provider)})` : publishedNumber(n);
      return item;
    }),
    // A currency replaced at a legal fixed ratio: the numbers are its successor's, at that ratio.
    ...(p.replaced ?? []).map((r) => {
      const item = document.createElement('li');
      const since = document.createElement('time');
      since.dateTime = r.from;
      since.textContent = formatDay(r.from);
      item.append(`1 ${r.successor} = ${formatDecimal(r.ratio)} ${r.currency}, fixed by law since `, since, ` (${r.reference})`);
      return item;
    }),
  );
  showSetAside(p.setAside ?? [], p.flagged ?? []);
  box.hidden = false;
}
