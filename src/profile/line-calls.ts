// The calls a source line makes beside one of them. A frameless builtin (JSON.stringify, a
// regexp in the interpreter) is recognised by its calling line, but on Node 22+ V8 charges
// the ticks of a callee inlined by Maglev to the caller's line too: in
// `JSON.stringify(summarize(buildRows(n)))` most of the line's ticks are buildRows'. The
// builder compares these names with the function's callees in the profile to know when a
// line's ticks cannot be given to the builtin alone.

const callName = /([A-Za-z_$][\w$]*)\s*\(/g;
/** Keywords followed by a parenthesis: not calls. */
export const notCalls: ReadonlySet<string> = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'function',
  'return',
  'typeof',
  'await',
  'yield',
  'void',
  'in',
  'of',
  'do',
  'else',
]);

/** Index of the parenthesis closing the one at `open`, or the line's length when it stays open. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return text.length;
}

/**
 * Names of the functions called on `text` other than the call starting at `at` and the calls
 * whose arguments hold it: `res.end(JSON.stringify(body))` → []; `JSON.stringify(build(x))`
 * → ["build"]. A name is the last identifier before the parenthesis (`a.b.c(` → "c").
 */
export function otherCallsOnLine(text: string, at: number): string[] {
  const out: string[] = [];
  const own = text.indexOf('(', at);
  for (const m of text.matchAll(callName)) {
    const name = m[1];
    const open = m.index + m[0].length - 1;
    if (notCalls.has(name)) continue;
    if (open === own) continue; // the call itself (`stringify` of `JSON.stringify(`)
    if (open < at && closingParen(text, open) > at) continue; // a call wrapping it
    out.push(name);
  }
  return out;
}

/** Names of every function called on `text` (`a.b.c(` → "c"), keywords left out, in order. */
export function callsOnLine(text: string): string[] {
  return [...text.matchAll(callName)].map((m) => m[1]).filter((name) => !notCalls.has(name));
}
