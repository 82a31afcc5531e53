// Reads the agent's configuration (HOTPATH_AGENT_CONFIG, JSON) and fills in defaults; never throws.
import { ENV, type AgentConfig } from './protocol.js';

export const DEFAULT_CONFIG: AgentConfig = { intervalMs: 100, cpuSamplingIntervalUs: 1000, heap: false, hooks: true, heapSample: true };

/** Below this the V8 sampler's own cost dominates (research: 20-35 % at < 100 µs). */
export const MIN_SAMPLING_INTERVAL_US = 100;

/** The run's secret as the CLI makes it (hex); anything else is ignored (the CLI will then drop the connection). */
const SECRET = /^[0-9a-f]{16,128}$/;

export function readAgentConfig(env: NodeJS.ProcessEnv): { config: AgentConfig; problem?: string } {
  const raw = env[ENV.config];
  if (!raw) return { config: { ...DEFAULT_CONFIG } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { config: { ...DEFAULT_CONFIG }, problem: `${ENV.config} is not JSON` };
  }
  return normalize(parsed);
}

function normalize(value: unknown): { config: AgentConfig; problem?: string } {
  const config = { ...DEFAULT_CONFIG };
  if (typeof value !== 'object' || value === null) return { config, problem: `${ENV.config} is not an object` };
  const v = value as Record<string, unknown>;
  let problem: string | undefined;
  if (typeof v.intervalMs === 'number' && v.intervalMs >= 10 && v.intervalMs <= 60_000) config.intervalMs = v.intervalMs;
  if (typeof v.cpuSamplingIntervalUs === 'number') {
    if (v.cpuSamplingIntervalUs >= MIN_SAMPLING_INTERVAL_US) config.cpuSamplingIntervalUs = v.cpuSamplingIntervalUs;
    else
      problem = `cpuSamplingIntervalUs ${v.cpuSamplingIntervalUs} refused (minimum ${MIN_SAMPLING_INTERVAL_US} µs); using ${config.cpuSamplingIntervalUs}`;
  }
  if (typeof v.heap === 'boolean') config.heap = v.heap;
  if (typeof v.hooks === 'boolean') config.hooks = v.hooks;
  if (typeof v.secret === 'string' && SECRET.test(v.secret)) config.secret = v.secret;
  if (typeof v.heapSample === 'boolean') config.heapSample = v.heapSample;
  if (typeof v.profile === 'boolean') config.profile = v.profile;
  return problem === undefined ? { config } : { config, problem };
}
