// Reads profile files from disk into validated profiles (coded errors for unreadable files),
// through run-dir's one reader of a profile's bytes.

import { readProfileFile } from '../run-dir/read-profile-file.js';
import { parseCpuProfile, type CpuProfile } from './cpu-profile.js';
import { parseHeapProfile, type HeapProfile } from './heap-profile.js';

export function readCpuProfile(path: string): Promise<CpuProfile> {
  return Promise.resolve().then(() => parseCpuProfile(readProfileFile(path), path));
}

export function readHeapProfile(path: string): Promise<HeapProfile> {
  return Promise.resolve().then(() => parseHeapProfile(readProfileFile(path), path));
}
