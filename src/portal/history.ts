/** The history: the chart and its statistics, the range or two dates, the grouping, and the CSV download. */
import type { Chart as ChartJs, ChartConfiguration, ChartDataset } from 'chart.js';
import { api, ApiError, apiUrl, describeError, showError, todayUtc } from './api.js';
import { $ } from './dom.js';
import { formatDay, formatDecimal, formatPct, formatPeriod, monthFormat, shortDayFormat, unit } from './format.js';
import { activeKey, config, DAY, RANGE_MONTHS, state, withSource, type Range } from './state.js';
import type { Group, History } from './types.js';

/** Chart.js, from its own script (loaded before this one, both deferred): its browser build defines this global. */
declare global {
  interface Window {
    Chart: typeof ChartJs;
  }
}

type LineChart = ChartJs<'line', Array<number | null>, string>;

const historyError = $('history-error');
const canvas = $<HTMLCanvasElement>('chart');
let chart: LineChart | null = null;
let historyRequest: AbortController | null = null;
let shownHistory: History | null = null;

const customRange = $<HTMLFormElement>('custom-range');
const rangeStartInput = $<HTMLInputElement>('range-start');
const rangeEndInput = $<HTMLInputElement>('range-end');
const rangeError = $('range-error');

/** The history's query: the pair, its range or dates, its grouping and source, then `extra`. */
export function historyQuery(extra: Record<string, string> = {}): Record<string, string> {
  const window: Record<string, string> = state.range !== 'custom' ? { range: state.range } : state.end ? { start: state.start, end: state.end } : { start: state.start };
  return { from: state.from, to: state.to, ...window, ...(state.group ? { group: state.group } : {}), ...withSource({}), ...extra };
}

/** A day some calendar months before another, clamped to the end of a shorter month, as the API counts a range back. */
function monthsBefore(day: string, months: number): string {
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  const month = new Date(Date.UTC(y, m - 1 - months, 1));
  const lastDay = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 0)).getUTCDate();
  month.setUTCDate(Math.min(d, lastDay));
  return month.toISOString().slice(0, 10);
}

export function showRangeInputs(): void {
  rangeStartInput.value = state.start;
  rangeEndInput.value = state.end || todayUtc();
}

/** What is wrong with the typed dates, and in which field; null when they can be asked for. */
function checkRange(start: string, end: string): { input: HTMLInputElement; message: string } | null {
  const today = todayUtc();
  if (!DAY.test(start)) return { input: rangeStartInput, message: 'Enter the first day of the range.' };
  if (!DAY.test(end)) return { input: rangeEndInput, message: 'Enter the last day of the range.' };
  if (start > today) return { input: rangeStartInput, message: `The start cannot be after today (${formatDay(today)}, UTC).` };
  if (end > today) return { input: rangeEndInput, message: `The end cannot be after today (${formatDay(today)}, UTC).` };
  if (start > end) return { input: rangeStartInput, message: 'The start must be on or before the end.' };
  return null;
}

/** A problem with the dates, said under them and marked on the field it concerns; null clears it. */
function showRangeError(message: string | null, input?: HTMLInputElement): void {
  for (const field of [rangeStartInput, rangeEndInput]) field.setAttribute('aria-invalid', String(field === input));
  rangeError.textContent = message ?? '';
  rangeError.hidden = !message;
}

/** `onChange`: the range, the dates or the grouping changed (already in `state`); the history is asked for after it. */
export function initHistory(onChange: () => void): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('.range')) {
    // 10y and max are offered only where the server keeps more than five years.
    if (button.dataset.range !== 'custom' && !config.history.ranges.includes(button.dataset.range ?? '')) {
      button.remove();
      continue;
    }
    button.addEventListener('click', () => {
      const range = button.dataset.range as Range | 'custom';
      const custom = range === 'custom';
      if (custom && state.range === 'custom') return rangeStartInput.focus();
      if (custom) {
        // The dates start as the range shown, so the chart stays as it is until they are changed.
        const today = todayUtc();
        state.start = state.range === 'max' ? (config.history.oldest ?? today) : monthsBefore(today, RANGE_MONTHS[state.range as Exclude<Range, 'max'>]);
        state.end = today;
        showRangeInputs();
        showRangeError(null);
      }
      state.range = range;
      onChange();
      void loadHistory();
      if (custom) rangeStartInput.focus();
    });
  }

  for (const button of document.querySelectorAll<HTMLButtonElement>('.grouping')) {
    button.addEventListener('click', () => {
      state.group = (button.dataset.group ?? '') as Group;
      onChange();
      void loadHistory();
    });
  }

  customRange.addEventListener('submit', (event) => {
    event.preventDefault();
    const [start, end] = [rangeStartInput.value, rangeEndInput.value];
    const problem = checkRange(start, end);
    if (problem) {
      showRangeError(problem.message, problem.input);
      problem.input.focus();
      return;
    }
    showRangeError(null);
    state.start = start;
    state.end = end;
    onChange();
    void loadHistory();
  });

  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (shownHistory) drawChart(shownHistory);
  });

  csvLink.addEventListener('click', (event) => {
    event.preventDefault();
    void downloadCsv();
  });

  // The calendars stop at today (UTC); the server has the last word, and says so in its problem.
  rangeStartInput.max = rangeEndInput.max = todayUtc();
  if (state.range === 'custom') showRangeInputs();
}

function markRange(): void {
  for (const button of document.querySelectorAll<HTMLElement>('.range')) button.setAttribute('aria-pressed', String(button.dataset.range === state.range));
  for (const button of document.querySelectorAll<HTMLElement>('.grouping')) button.setAttribute('aria-pressed', String(button.dataset.group === state.group));
  customRange.hidden = state.range !== 'custom';
}

export async function loadHistory(): Promise<void> {
  markRange();
  historyRequest?.abort();
  $('history-pair').textContent = `${state.from} → ${state.to}`;
  updateCsvLink();
  if (!activeKey()) return;
  // Dates from the address are checked as typed ones are: what is plainly wrong is not asked for.
  const problem = state.range === 'custom' ? checkRange(state.start, state.end || todayUtc()) : null;
  if (problem) {
    shownHistory = null;
    clearHistory();
    showError(historyError, null);
    return showRangeError(problem.message, problem.input);
  }
  const controller = new AbortController();
  historyRequest = controller;
  try {
    const response = await api('/api/v1/history', historyQuery(), controller.signal);
    const body = (await response.json()) as History;
    if (controller.signal.aborted) return;
    showError(historyError, null);
    if (state.range === 'custom') showRangeError(null);
    shownHistory = body;
    showHistory(body);
  } catch (error) {
    if (controller.signal.aborted) return;
    shownHistory = null;
    clearHistory();
    // The API's word on the dates (after today on its clock, beyond the retained years) goes under them.
    const param = error instanceof ApiError ? error.problem?.param : undefined;
    if (state.range === 'custom' && (param === 'start' || param === 'end')) {
      showError(historyError, null);
      showRangeError(describeError(error), param === 'start' ? rangeStartInput : rangeEndInput);
    } else showError(historyError, error);
  }
}

function setStat(id: string, text: string, value: string, className?: string): void {
  const element = $(id);
  element.textContent = text;
  element.dataset.value = value;
  element.className = className ?? '';
}

function trendClass(value: number): string {
  return value > 0 ? 'up' : value < 0 ? 'down' : '';
}

const KINDS: Record<Group, string> = { '': 'Daily', week: 'Weekly average', month: 'Monthly average' };
const IN_PERIOD: Record<Group, string> = { '': 'on', week: 'in the', month: 'in' };

function showHistory(body: History): void {
  const s = body.stats;
  const [from, to] = [body.pair.slice(0, 3), body.pair.slice(3)];
  const group = body.group ?? '';
  setStat('stat-best', formatDecimal(s.best), s.best);
  $('stat-best-date').textContent = formatPeriod(s.bestDate, group);
  setStat('stat-worst', formatDecimal(s.worst), s.worst);
  $('stat-worst-date').textContent = formatPeriod(s.worstDate, group);
  setStat('stat-average', formatDecimal(s.average), s.average);
  $('stat-count').textContent = countText(body);
  setStat('stat-change', formatPct(s.changePct), String(s.changePct), trendClass(s.changePct));
  setStat('stat-vs-average', formatPct(s.currentVsAveragePct), String(s.currentVsAveragePct), trendClass(s.currentVsAveragePct));
  const first = body.points[0];
  const last = body.points[body.points.length - 1];
  const when = (day: string) => `${IN_PERIOD[group]} ${formatPeriod(day, group)}`;
  const span = first && last ? `, ${formatPeriod(first.date, group)} to ${formatPeriod(last.date, group)}` : '';
  const summary = `${KINDS[group]} ${from} to ${to} rates${span}: best ${s.best} ${when(s.bestDate)}, worst ${s.worst} ${when(s.worstDate)}, average ${s.average}.`;
  canvas.setAttribute('aria-label', summary);
  $('chart-caption').textContent = summary;
  drawChart(body);
}

/** "250 days"; grouped, the periods and the days they average: "6 months (116 days)". */
function countText(body: History): string {
  if (!body.group) return unit(body.count, 'day');
  const days = body.points.reduce((sum, p) => sum + p.days, 0);
  return `${unit(body.count, body.group)} (${unit(days, 'day')})`;
}

function clearHistory(): void {
  for (const id of ['stat-best', 'stat-worst', 'stat-average', 'stat-change', 'stat-vs-average']) setStat(id, '–', '');
  for (const id of ['stat-best-date', 'stat-worst-date', 'stat-count']) $(id).textContent = '';
  canvas.setAttribute('aria-label', 'No history to show.');
  chart?.destroy();
  chart = null;
}

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

function drawChart(body: History): void {
  const labels = body.points.map((p) => p.date);
  const values = body.points.map((p) => Number(p.rate));
  const only = (date: string, rate: string) => labels.map((d) => (d === date ? Number(rate) : null));
  const average = Number(body.stats.average);
  const group = body.group ?? '';
  // Months are told by their names; so are days (or weeks) once they span more than a few months.
  const long = group === 'month' || labels.length > 120 || (group === 'week' && labels.length > 26);
  const colors = {
    line: css('--chart-line'),
    fill: css('--chart-fill'),
    average: css('--chart-average'),
    grid: css('--chart-grid'),
    text: css('--chart-text'),
    best: css('--chart-best'),
    worst: css('--chart-worst'),
  };
  const marker = (label: string, date: string, rate: string, color: string): ChartDataset<'line', Array<number | null>> => ({
    label: `${label} ${formatDecimal(rate)}`,
    data: only(date, rate),
    showLine: false,
    pointRadius: 6,
    pointHoverRadius: 7,
    pointBackgroundColor: color,
    pointBorderColor: css('--surface'),
    pointBorderWidth: 2,
    borderColor: color,
    backgroundColor: color,
    order: 0,
  });
  const tick = (_value: string | number, index: number) => {
    const day = labels[index];
    if (!day) return '';
    return (long ? monthFormat : shortDayFormat).format(new Date(`${day}T00:00:00Z`));
  };
  const configuration: ChartConfiguration<'line', Array<number | null>, string> = {
    type: 'line',
    data: {
      labels,
      datasets: [
        {
          label: body.pair.slice(0, 3) + ' → ' + body.pair.slice(3),
          data: values,
          borderColor: colors.line,
          backgroundColor: colors.fill,
          fill: 'origin',
          borderWidth: 2,
          // Few points (months, weeks of a short range) are drawn as points as well as a line.
          pointRadius: labels.length <= 60 && group ? 2.5 : 0,
          pointHoverRadius: 4,
          tension: 0,
          order: 2,
        },
        {
          label: `Average ${formatDecimal(body.stats.average)}`,
          data: labels.map(() => average),
          borderColor: colors.average,
          backgroundColor: colors.average,
          borderDash: [6, 5],
          borderWidth: 1.5,
          pointRadius: 0,
          pointHoverRadius: 0,
          fill: false,
          order: 1,
        },
        marker('Best', body.stats.bestDate, body.stats.best, colors.best),
        marker('Worst', body.stats.worstDate, body.stats.worst, colors.worst),
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: reducedMotion.matches ? false : { duration: 250 },
      interaction: { mode: 'index', intersect: false },
      layout: { padding: { top: 4, right: 6 } },
      scales: {
        x: {
          ticks: { color: colors.text, maxRotation: 0, autoSkip: true, maxTicksLimit: canvas.clientWidth < 520 ? 4 : 7, callback: tick },
          grid: { display: false },
          border: { color: colors.grid },
        },
        y: {
          beginAtZero: false,
          grace: '4%',
          ticks: { color: colors.text, maxTicksLimit: 6 },
          grid: { color: colors.grid },
          border: { display: false },
        },
      },
      plugins: {
        legend: {
          position: 'bottom',
          labels: {
            color: colors.text,
            usePointStyle: true,
            pointStyle: 'circle',
            boxWidth: 8,
            boxHeight: 8,
            padding: 14,
            sort: (a, b) => (a.datasetIndex ?? 0) - (b.datasetIndex ?? 0),
          },
        },
        tooltip: {
          filter: (item) => item.datasetIndex === 0,
          callbacks: {
            title: (items) => formatPeriod(labels[items[0]?.dataIndex ?? 0] ?? '', group),
            label: (item) => {
              const point = body.points[item.dataIndex];
              if (!point) return '';
              const rate = ` ${formatDecimal(point.rate)} ${body.pair.slice(3)}`;
              return group ? `${rate}, the average of ${point.days} day${point.days === 1 ? '' : 's'}` : rate;
            },
          },
        },
      },
    },
  };
  chart?.destroy();
  chart = new window.Chart(canvas, configuration);
}

// The CSV is fetched with the key in a header (never in a URL), then saved under the server's file name.
const csvLink = $<HTMLAnchorElement>('csv-link');

function updateCsvLink(): void {
  const url = apiUrl('/api/v1/history', historyQuery({ format: 'csv' }));
  csvLink.href = url.pathname + url.search;
  // The server names the file (Content-Disposition); this is the name it gives, for a browser that saves the link itself.
  const window = state.range === 'custom' ? `${state.start}_${state.end || todayUtc()}` : state.range;
  csvLink.download = `${state.from}${state.to}_${window}${state.group ? `_${state.group}` : ''}.csv`;
}

async function downloadCsv(): Promise<void> {
  try {
    const response = await api('/api/v1/history', historyQuery({ format: 'csv' }));
    const disposition = response.headers.get('Content-Disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? csvLink.download;
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const save = document.createElement('a');
    save.href = url;
    save.download = name;
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    showError(historyError, null);
  } catch (error) {
    showError(historyError, error);
  }
}

