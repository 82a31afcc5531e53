// A small, safe Markdown renderer for the findings' advice: paragraphs, headings, lists,
// fenced code, inline code, bold, italic and http(s) links. It builds DOM nodes and never
// parses HTML, so markup in the text stays text.

import { h, type Child } from './dom.js';

/** Renders Markdown into a fragment of DOM nodes. */
export function renderMarkdown(md: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
      continue;
    }
    if (/^\s*```/.test(line)) {
      i = codeBlock(lines, i, frag);
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    if (heading) {
      frag.appendChild(h(heading[1].length <= 2 ? 'h4' : 'h5', null, ...inline(heading[2])));
      i++;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = list(lines, i, frag);
      continue;
    }
    i = paragraph(lines, i, frag);
  }
  return frag;
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;

function codeBlock(lines: string[], start: number, out: Node): number {
  const body: string[] = [];
  let i = start + 1;
  while (i < lines.length && !/^\s*```/.test(lines[i])) body.push(lines[i++]);
  out.appendChild(h('pre', { class: 'code' }, h('code', null, body.join('\n'))));
  return i + 1;
}

function list(lines: string[], start: number, out: Node): number {
  const ordered = /^\s*\d/.test(lines[start]);
  const el = h(ordered ? 'ol' : 'ul', null);
  let i = start;
  while (i < lines.length && LIST_ITEM.test(lines[i])) {
    let text = lines[i].replace(LIST_ITEM, '');
    i++;
    // Continuation lines (indented, not a new item) belong to the item.
    while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !LIST_ITEM.test(lines[i])) text += ' ' + lines[i++].trim();
    el.appendChild(h('li', null, ...inline(text)));
  }
  out.appendChild(el);
  return i;
}

function paragraph(lines: string[], start: number, out: Node): number {
  const parts: string[] = [];
  let i = start;
  while (
    i < lines.length &&
    lines[i].trim() !== '' &&
    !/^\s*```/.test(lines[i]) &&
    !/^#{1,4}\s/.test(lines[i]) &&
    !LIST_ITEM.test(lines[i])
  ) {
    parts.push(lines[i++].trim());
  }
  out.appendChild(h('p', null, ...inline(parts.join(' '))));
  return i;
}

// Inline spans, tried in this order at each position.
const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** Inline Markdown as text nodes and safe elements. */
export function inline(text: string): Child[] {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    out.push(span(m));
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function span(m: RegExpMatchArray): Node {
  if (m[1] !== undefined) return h('code', null, m[1]);
  if (m[2] !== undefined || m[3] !== undefined) return h('strong', null, ...inline(m[2] ?? m[3]));
  if (m[4] !== undefined || m[5] !== undefined) return h('em', null, ...inline(m[4] ?? m[5]));
  return link(m[6], m[7]);
}

/** Only http(s) links become anchors (opened outside the report); anything else stays text. */
function link(label: string, href: string): Node {
  if (!/^https?:\/\//i.test(href)) return document.createTextNode(`${label} (${href})`);
  const a = h('a', { attrs: { href, target: '_blank', rel: 'noopener noreferrer' } }, ...inline(label));
  return a;
}
