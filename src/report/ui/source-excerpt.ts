// A few numbered lines of the culprit's source, the culprit line marked. Text only.

import { h } from './dom.js';
import type { SourceExcerpt } from '../html/report-payload.js';

export function sourceExcerpt(x: SourceExcerpt): HTMLElement {
  const rows = x.lines.map((text, i) => {
    const n = x.firstLine + i;
    return h(
      'div',
      { class: n === x.line ? 'src-line hit' : 'src-line' },
      h('span', { class: 'src-no' }, String(n)),
      h('span', { class: 'src-text' }, text),
    );
  });
  return h('pre', { class: 'source', attrs: { 'aria-label': `${x.file} around line ${x.line}` } }, ...rows);
}
