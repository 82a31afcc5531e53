// Small composable checks of JSON values read back from a run directory (telemetry lines,
// load.json): a value of the wrong shape is left out with a warning, not trusted.

export type Check = (v: unknown) => boolean;

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const num: Check = (v) => typeof v === 'number' && Number.isFinite(v);
export const str: Check = (v) => typeof v === 'string';
export const bool: Check = (v) => typeof v === 'boolean';
export const nullableNum: Check = (v) => v === null || num(v);
export const opt =
  (c: Check): Check =>
  (v) =>
    v === undefined || c(v);
export const arrayOf =
  (c: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(c);
export const record =
  (c: Check): Check =>
  (v) =>
    isObj(v) && Object.values(v).every(c);
export const shape =
  (fields: Record<string, Check>): Check =>
  (v) =>
    isObj(v) && Object.entries(fields).every(([k, c]) => c(v[k]));
