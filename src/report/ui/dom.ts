// DOM construction helpers. Every string goes in as text (textContent), never as HTML:
// function names, URLs and paths come from the profiled program and must not be parsed.

export type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  class?: string;
  id?: string;
  title?: string;
  style?: Partial<CSSStyleDeclaration>;
  data?: Record<string, string>;
  attrs?: Record<string, string>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (ev: HTMLElementEventMap[K]) => void }>;
}

/** Creates an element; string children become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) applyAttrs(el, attrs);
  append(el, children);
  return el;
}

function applyAttrs(el: HTMLElement, a: Attrs): void {
  if (a.class) el.className = a.class;
  if (a.id) el.id = a.id;
  if (a.title) el.title = a.title;
  if (a.style) Object.assign(el.style, a.style);
  for (const [k, v] of Object.entries(a.data ?? {})) el.dataset[k] = v;
  for (const [k, v] of Object.entries(a.attrs ?? {})) el.setAttribute(k, v);
  for (const [type, fn] of Object.entries(a.on ?? {})) el.addEventListener(type, fn as EventListener);
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function replace(el: Node, ...children: Child[]): void {
  while (el.firstChild) el.removeChild(el.firstChild);
  append(el, children);
}

/** A titled section with an id the table of contents links to. */
export function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return h('section', { id, class: 'section' }, h('h2', null, title), ...children);
}

/** A small table from header cells and rows of cells. */
export function table(head: string[], rows: Child[][], cls = 'grid'): HTMLTableElement {
  return h(
    'table',
    { class: cls },
    h('thead', null, h('tr', null, ...head.map((c) => h('th', null, c)))),
    h('tbody', null, ...rows.map((r) => h('tr', null, ...r.map((c) => h('td', null, c))))),
  );
}
