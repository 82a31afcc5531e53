// The agent's configuration from HOTPATH_AGENT_CONFIG: defaults, accepted values, and a CPU
// sampling interval below 100 µs refused with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAgentConfig, DEFAULT_CONFIG } from '../../src/agent/agent-config.js';

test('no config: the defaults', () => {
  assert.deepEqual(readAgentConfig({}), {
    config: { intervalMs: 100, cpuSamplingIntervalUs: 1000, heap: false, hooks: true, heapSample: true },
  });
  assert.deepEqual(readAgentConfig({}).config, DEFAULT_CONFIG);
});

test('accepted values are used', () => {
  const env = { HOTPATH_AGENT_CONFIG: JSON.stringify({ intervalMs: 250, cpuSamplingIntervalUs: 500, heap: true, hooks: false }) };
  assert.deepEqual(readAgentConfig(env), {
    config: { intervalMs: 250, cpuSamplingIntervalUs: 500, heap: true, hooks: false, heapSample: true },
  });
});

test('a sampling interval below 100 µs is refused, with the reason', () => {
  const { config, problem } = readAgentConfig({ HOTPATH_AGENT_CONFIG: JSON.stringify({ cpuSamplingIntervalUs: 50 }) });
  assert.equal(config.cpuSamplingIntervalUs, 1000);
  assert.match(problem ?? '', /50 refused \(minimum 100/);
});

test('garbage is survived: defaults and a problem, never a throw', () => {
  assert.equal(readAgentConfig({ HOTPATH_AGENT_CONFIG: '{nope' }).problem, 'HOTPATH_AGENT_CONFIG is not JSON');
  assert.equal(readAgentConfig({ HOTPATH_AGENT_CONFIG: '42' }).problem, 'HOTPATH_AGENT_CONFIG is not an object');
  assert.deepEqual(readAgentConfig({ HOTPATH_AGENT_CONFIG: JSON.stringify({ intervalMs: -1, heap: 'yes' }) }).config, DEFAULT_CONFIG);
});

test('profile: taken when a boolean (the run will profile: the profiler is primed at listen), absent otherwise', () => {
  assert.equal(readAgentConfig({ HOTPATH_AGENT_CONFIG: JSON.stringify({ profile: true }) }).config.profile, true);
  assert.equal(readAgentConfig({ HOTPATH_AGENT_CONFIG: JSON.stringify({ profile: false }) }).config.profile, false);
  assert.equal('profile' in readAgentConfig({ HOTPATH_AGENT_CONFIG: JSON.stringify({ profile: 'yes' }) }).config, false);
  assert.equal('profile' in readAgentConfig({}).config, false);
});
