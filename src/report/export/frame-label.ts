// How a frame is named in the text exports: `name file:line`, as 0x and flamegraph.pl users
// expect; natives and special nodes keep their bare name.

import type { Frame } from '../../profile/call-tree.js';

export function frameLabel(f: Frame): string {
  if (f.file === '') return f.name;
  return f.line > 0 ? `${f.name} ${f.file}:${f.line}` : `${f.name} ${f.file}`;
}
