/**
 * exrates developer portal: the page at `/` (index.html), wired here. Chart.js is loaded before
 * this script (both deferred) and served by this server; scripts/build.mjs bundles these modules
 * into the one script the page loads (portal.js).
 *
 * Each part of the page is a module: the key bar, the currency pickers, the sources, the
 * conversion, the table of every currency, the history and the code examples. Each is given what
 * to do when the visitor changes what it shows; what follows from a change lives here.
 */
import { initCode, renderCode } from './code.js';
import { clearResult, convert, initConverter } from './converter.js';
import { initHistory, loadHistory } from './history.js';
import { initKeyBar, renderKeyStatus } from './key-bar.js';
import { initMany, loadMany, markTableOpen } from './many.js';
import { initPickers } from './pickers.js';
import { initSources, renderSources } from './sources.js';
import { rememberInAddress } from './state.js';

/** Everything shown, asked for again: a new key, pair or source. */
function refreshAll(): void {
  renderSources();
  renderCode();
  void convert();
  void loadHistory();
  void loadMany();
}

initKeyBar(refreshAll);
initPickers(() => {
  rememberInAddress();
  refreshAll();
});
initSources(() => {
  rememberInAddress();
  refreshAll();
});
// The amount or the day: the conversion and the table.
initConverter(() => {
  rememberInAddress();
  renderCode();
  void convert();
  void loadMany();
});
initMany();
// The range, the dates or the grouping: the history asks on its own once the address and the code say them.
initHistory(() => {
  rememberInAddress();
  renderCode();
});
initCode();

renderKeyStatus();
clearResult();
markTableOpen();
refreshAll();
