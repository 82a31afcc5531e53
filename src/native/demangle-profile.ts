// C++ names perf left mangled (`perf script --no-demangle`, or a perf built without a demangler:
// `_ZN4node11StringBytes5WriteEPN2v87Isolate...`) demangled in a profile built from perf's
// samples, the way perf prints them itself (no parameter types: `node::StringBytes::Write`), so
// an imported perf script and `hotpath run --native` name native frames alike. One c++filt for
// every distinct name (symbolize.ts's demangle); without c++filt the names stay as they are.
import type { CpuProfile } from '../profile/cpu-profile.js';
import { demangle } from './symbolize.js';

const MANGLED = /^_Z/;

/** Demangles the mangled native frame names of `profiles` in place. */
export async function demangleProfiles(profiles: readonly CpuProfile[], cxxfilt = 'c++filt'): Promise<void> {
  const frames = profiles.flatMap((p) => p.nodes.map((n) => n.callFrame)).filter((f) => f.url === '' && MANGLED.test(f.functionName));
  if (frames.length === 0) return;
  const names = [...new Set(frames.map((f) => f.functionName))];
  const readable = new Map<string, string>();
  (await demangle(names, cxxfilt, ['-p'])).forEach((d, i) => readable.set(names[i], d));
  for (const f of frames) f.functionName = readable.get(f.functionName) ?? f.functionName;
}
