// The differential flame graph's colours (compare.html): blue for a frame that takes less CPU
// per request after the change (a gain), red for more (a loss), stronger for larger changes,
// grey for about the same. No DOM: the browser tests read the same palettes.

/** Colour steps each way, from just beyond neutral to the strongest shade. */
export const DIFF_STEPS = 8;
export const DIFF_NEUTRAL = 'hsl(220 8% 88%)';
const scale = (hue: number) =>
  Array.from({ length: DIFF_STEPS }, (_, k) => `hsl(${hue} ${45 + 40 * ((k + 1) / DIFF_STEPS)}% ${86 - 34 * ((k + 1) / DIFF_STEPS)}%)`);
/** More CPU per request after the change. */
export const LOSS_COLORS = scale(2);
/** Less CPU per request after the change. */
export const GAIN_COLORS = scale(212);
/** Changes below this share of the largest change are drawn neutral. */
export const DIFF_NEUTRAL_SHARE = 0.02;

/** The colour of a change, given the largest change in the view (both in µs per request). */
export function diffColor(change: number, maxChange: number): string {
  const share = Math.abs(change) / (maxChange || 1);
  if (share < DIFF_NEUTRAL_SHARE) return DIFF_NEUTRAL;
  const k = Math.min(DIFF_STEPS - 1, Math.floor(Math.sqrt(share) * DIFF_STEPS));
  return (change > 0 ? LOSS_COLORS : GAIN_COLORS)[k];
}
