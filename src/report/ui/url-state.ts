// The view in the page's URL fragment (#p=1&v=inverted&hide=idle,gc&q=hash&w=2.1-2.35&f=fn),
// so a view can be bookmarked or sent along with the file. Written with replaceState: no
// history entry per click.

export interface UrlState {
  profile?: number;
  mode?: string;
  hidden?: string[];
  query?: string;
  window?: { from: number; to: number };
  focus?: string;
}

export function readUrlState(hash: string = location.hash): UrlState {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const out: UrlState = {};
  const p = Number(q.get('p'));
  if (q.has('p') && Number.isInteger(p) && p >= 0) out.profile = p;
  const v = q.get('v');
  if (v) out.mode = v;
  if (q.has('hide')) out.hidden = (q.get('hide') ?? '').split(',').filter(Boolean);
  const query = q.get('q');
  if (query) out.query = query;
  const w = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(q.get('w') ?? '');
  if (w && Number(w[2]) > Number(w[1])) out.window = { from: Number(w[1]), to: Number(w[2]) };
  const f = q.get('f');
  if (f) out.focus = f;
  return out;
}

export function writeUrlState(s: UrlState): void {
  const q = new URLSearchParams();
  if (s.profile) q.set('p', String(s.profile));
  if (s.mode && s.mode !== 'flame') q.set('v', s.mode);
  if (s.hidden) q.set('hide', s.hidden.join(','));
  if (s.query) q.set('q', s.query);
  if (s.window) q.set('w', `${s.window.from.toFixed(3)}-${s.window.to.toFixed(3)}`);
  if (s.focus) q.set('f', s.focus);
  const hash = q.toString();
  try {
    history.replaceState(null, '', hash ? `#${hash}` : location.pathname + location.search);
  } catch {
    // Some viewers forbid it (sandboxed frames): the view just is not kept in the URL.
  }
}
