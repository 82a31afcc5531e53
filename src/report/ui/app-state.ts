// The page's shared state: the selected time window (set by dragging on the timeline, read
// by the flame graph) and the thread being looked at. A tiny observable, no framework.

export interface TimeWindow {
  /** Seconds since the run started. */
  from: number;
  to: number;
}

type Listener<T> = (value: T) => void;

export class Observable<T> {
  private listeners: Listener<T>[] = [];
  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(value: T): void {
    this.current = value;
    for (const l of this.listeners) l(value);
  }

  subscribe(l: Listener<T>): void {
    this.listeners.push(l);
  }
}

export const timeWindow = new Observable<TimeWindow | null>(null);
/** Ask the flame graph to focus a function: by name, file and line. */
export const focusRequest = new Observable<{ name: string; file: string; line: number } | null>(null);
