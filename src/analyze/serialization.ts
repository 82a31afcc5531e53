// Serialization: JSON.stringify / JSON.parse as a share of the CPU while the loop is busy,
// with the app function that asked for it (attributed through the profile model), or, when most
// of it ran with no app code on the stack (a body parser), the dependency that ran it.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';
import { appFunctions, cpuViewOf, type CpuView } from './signals/cpu-view.js';
import { loopStats } from './signals/loop-stats.js';
import { describeCulprit, frameCulprit } from './signals/culprit.js';
import { round } from './signals/stats.js';
import { bodyParseAdvice, deepCopyAdvice, parseAdvice, serializationAdvice } from './serialization.advice.js';
import { describeBytes, describeDominantWork, parsesRequestBodies, shortFile, workPlace } from './signals/dominant-work.js';
import { JSON_DEEP_COPY } from '../profile/work-kind.js';
import { idleForWantOfRequests } from './event-loop-blocking.js';

/** JSON work as a share of non-idle CPU worth reporting: a fifth of the server's time. */
export const SERIALIZATION_MIN_SHARE = 0.2;
/** Half of the CPU in JSON is critical. */
export const SERIALIZATION_CRITICAL_SHARE = 0.5;
/** Only matters when the loop is busy enough for CPU to limit throughput. */
export const SERIALIZATION_MIN_ELU = 0.5;
/** The share of the culprit's JSON time that deep copies, or JSON.parse, must hold for their own advice. */
export const SERIALIZATION_ADVICE_SHARE = 0.5;
/**
 * Ranked by the JSON work the named caller asks for (at least this share of all of it): fixing
 * that function gives back its part. The scenario stdout-logging's JSON was split between the
 * route (52 %) and the access logger (48 %), whose synchronous writes are sync-io's finding; beside
 * two test suites the JSON share rose from 5 % to 22 % and the route's serialization, counted
 * whole, outranked the logger that cost half the CPU.
 */
export const SERIALIZATION_IMPACT_MIN_CALLER_SHARE = 0.5;
/** App functions examined for their JSON work (the hottest ones). */
const CANDIDATES = 30;

export function serialization(run: RunData): Finding[] {
  const view = cpuViewOf(run);
  const s = loopStats(run);
  // A loop idle for want of requests (a busy machine's generator, a light load) still pays its share (event-loop-blocking).
  if (!view || !s || (s.eluMean < SERIALIZATION_MIN_ELU && !idleForWantOfRequests(s, run))) return [];
  const jsonUs = view.work.get('json') ?? 0;
  const share = jsonUs / view.activeUs;
  if (share < SERIALIZATION_MIN_SHARE) return [];
  // JSON work mostly run with no app frame on the stack (a body parser's JSON.parse) has no app caller to name,
  // unless an app function asks for more JSON work than that place runs (round s: a Fastify onSend hook
  // parsing and re-serializing each payload, 53 % of the CPU, beside the framework's own stringify of it).
  const place = workPlace(run, view, 'json');
  const top = topJsonCaller(view);
  const unowned = place?.unowned === true && !(top !== undefined && top.jsonUs >= jsonUs - appJsonUs(view)) ? place : undefined;
  const caller = unowned ? undefined : top;
  const culprit = caller ? frameCulprit(caller.frame, run.cwd) : undefined;
  const copying = caller !== undefined && caller.copyUs >= SERIALIZATION_ADVICE_SHARE * caller.jsonUs;
  const parsing =
    !copying && (caller !== undefined ? caller.parseUs >= SERIALIZATION_ADVICE_SHARE * caller.jsonUs : unowned?.label === 'JSON.parse');
  const bodies = unowned !== undefined && parsesRequestBodies(unowned);
  return [
    {
      code: 'HOTPATH_SERIALIZATION',
      category: 'serialization',
      severity: share >= SERIALIZATION_CRITICAL_SHARE ? 'critical' : 'warning',
      title:
        unowned && parsing
          ? `JSON parsing${unowned.source?.package ? ` in ${unowned.source.package}` : ''} takes a large share of the CPU`
          : 'JSON serialization takes a large share of the CPU',
      summary:
        `JSON.stringify/parse took ${round(share * 100, 0)} % of the CPU time while the loop was busy ${round(s.eluMean * 100, 0)} %.` +
        (culprit && caller
          ? ` Most of it is asked for by ${describeCulprit(culprit)} (${round((caller.jsonUs / jsonUs) * 100, 0)} % of the JSON time)${copying ? ', to deep-copy objects with JSON.parse(JSON.stringify())' : ''}.`
          : '') +
        (unowned
          ? ` Most of it is ${describeDominantWork(unowned, run.cwd)}, with no app function on the stack${s.requests > 0 ? `: ${round((s.cpuPerRequestMs * unowned.us) / view.activeUs, 1)} ms per request` : ''}.`
          : '') +
        (bodies ? ` The requests sent carried ${describeBytes(unowned!.requestBytes!)} each: this is the body parser's work.` : ''),
      evidence: {
        jsonShare: round(share, 3),
        jsonMs: round(jsonUs / 1000, 1),
        eluMean: round(s.eluMean, 3),
        ...(caller ? { callerJsonShare: round(caller.jsonUs / jsonUs, 3) } : {}),
        ...(copying ? { deepCopy: true } : {}),
        ...(parsing ? { mostlyParse: true } : {}),
        ...(unowned
          ? {
              noAppCode: true,
              ...(unowned.source
                ? {
                    workSource: `${shortFile(unowned.source.frame.file, run.cwd)}:${unowned.source.line}`,
                    workFunction: unowned.source.frame.name,
                  }
                : {}),
            }
          : {}),
        ...(unowned?.source?.package ? { workPackage: unowned.source.package } : {}),
        ...(bodies ? { requestBytes: Math.round(unowned!.requestBytes!) } : {}),
      },
      ...(culprit ? { culprit } : {}),
      recommendation: bodies ? bodyParseAdvice : copying ? deepCopyAdvice : parsing ? parseAdvice : serializationAdvice,
      impact: Math.min(1, share * s.eluMean * (caller ? Math.max(SERIALIZATION_IMPACT_MIN_CALLER_SHARE, caller.jsonUs / jsonUs) : 1)),
    },
  ];
}

/** JSON time charged to app functions (the rest ran with no app frame on the stack). */
function appJsonUs(view: CpuView): number {
  let us = 0;
  for (const f of appFunctions(view)) for (const i of view.workOf(f.frameIndex)) if (i.work === 'json') us += i.us;
  return us;
}

function topJsonCaller(view: CpuView) {
  let best: { frame: CpuView['functions'][number]['frame']; jsonUs: number; copyUs: number; parseUs: number } | undefined;
  for (const f of appFunctions(view).slice(0, CANDIDATES)) {
    const json = view.workOf(f.frameIndex).filter((i) => i.work === 'json');
    const us = (label?: string) => json.filter((i) => label === undefined || i.label === label).reduce((a, i) => a + i.us, 0);
    const jsonUs = us();
    if (jsonUs > (best?.jsonUs ?? 0)) best = { frame: f.frame, jsonUs, copyUs: us(JSON_DEEP_COPY), parseUs: us('JSON.parse') };
  }
  return best;
}
