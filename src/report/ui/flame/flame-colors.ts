// Frame colours: the hue says the layer (app, deps, node core, V8, native, GC, idle,
// program, agent, kernel), the intensity says how much self time the frame has (heat). Precomputed so the
// draw loop only indexes arrays.

export const HEAT_STEPS = 8;

/** Hue, base saturation per kind code (FRAME_KINDS order). */
const KIND_HUES: [number, number][] = [
  [12, 78], // app: warm red-orange, the code the user owns
  [42, 80], // deps: amber
  [205, 60], // node-core: blue
  [268, 45], // v8-builtin: violet
  [168, 45], // native: teal
  [330, 60], // gc: pink
  [0, 0], // idle: grey
  [30, 12], // program: grey-brown
  [95, 25], // agent: muted olive, hotpath's own overhead
  [225, 30], // kernel: slate, the operating system under the process (perf's native stacks)
];

function palette(light: (heat: number) => number, satScale: number): string[][] {
  return KIND_HUES.map(([hue, sat]) => {
    const steps: string[] = [];
    for (let h = 0; h < HEAT_STEPS; h++) {
      const heat = h / (HEAT_STEPS - 1);
      steps.push(`hsl(${hue} ${Math.round(sat * satScale * (0.55 + 0.45 * heat))}% ${Math.round(light(heat))}%)`);
    }
    return steps;
  });
}

/** Normal frames: hotter frames are more saturated and darker. */
export const FRAME_COLORS = palette((heat) => 80 - 22 * heat, 1);
/** Frames that do not match an active search. */
export const DIM_COLORS = palette(() => 90, 0.25);
export const MATCH_COLOR = 'hsl(292 85% 58%)';
export const ANCESTOR_COLOR = 'hsl(220 10% 84%)';
export const ROOT_COLOR = 'hsl(220 12% 76%)';

/** Legend swatch colour of a kind (its mid heat). */
export function kindColor(kind: number): string {
  return FRAME_COLORS[kind]?.[HEAT_STEPS >> 1] ?? ROOT_COLOR;
}
