// The flame graph's fixed geometry (no DOM here, so tests and the Node side can read it).

export const ROW_HEIGHT = 18;
/** Frames narrower than this are not drawn, nor is anything under them. */
export const MIN_FRAME_PX = 0.5;
/** Tallest canvas, CSS px: browsers fail on very tall canvases; rows scroll instead. */
export const MAX_CANVAS_HEIGHT = 720;
