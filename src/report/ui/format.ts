// Number formatting for people: durations, bytes, shares and rates, with units.

import { alsoFoundText, isAlsoFoundList, showInfinity } from '../../analyze/evidence.js';

export function ms(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (v >= 10_000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 100) return `${Math.round(v)} ms`;
  if (v >= 1) return `${v.toFixed(1)} ms`;
  return `${(v * 1000).toFixed(0)} µs`;
}

export function us(v: number): string {
  return ms(v / 1000);
}

export function bytes(v: number): string {
  if (!Number.isFinite(v)) return '–';
  const units = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function pct(share: number, digits = 1): string {
  if (!Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(digits)}%`;
}

export function num(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 1e6) return `${(v / 1e6).toFixed(2)} M`;
  if (Math.abs(v) >= 1e4) return `${(v / 1e3).toFixed(1)} k`;
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 1 ? 2 : 3);
}

/** A weight in a profile's unit: µs of CPU or bytes allocated. */
export function weight(v: number, unit: 'us' | 'bytes'): string {
  return unit === 'us' ? us(v) : bytes(v);
}

/** Evidence values of any JSON shape, shortened to one line. */
export function evidenceValue(v: unknown): string {
  if (typeof v === 'number') return num(v);
  if (typeof v === 'string') return showInfinity(v);
  if (typeof v === 'boolean' || v === null) return String(v);
  if (isAlsoFoundList(v)) return alsoFoundText(v);
  const s = JSON.stringify(v) ?? '';
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
}
