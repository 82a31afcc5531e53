// Reads profile files from disk into validated profiles (coded errors for unreadable files).

import { readFile } from 'node:fs/promises';
import { hotpathError } from '../errors.js';
import { parseCpuProfile, type CpuProfile } from './cpu-profile.js';
import { parseHeapProfile, type HeapProfile } from './heap-profile.js';

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_PROFILE', `Cannot read the profile ${path}: ${(cause as Error).message}`, {
      cause,
      details: { file: path },
    });
  }
}

export async function readCpuProfile(path: string): Promise<CpuProfile> {
  return parseCpuProfile(await readText(path), path);
}

export async function readHeapProfile(path: string): Promise<HeapProfile> {
  return parseHeapProfile(await readText(path), path);
}
