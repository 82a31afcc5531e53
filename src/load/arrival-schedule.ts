// The open model's plan for one worker: send k is due at t0 + k × interval, fixed in
// advance. Sends not yet made are implicit (everything from `next` on that is already due),
// so a backlog costs no memory and each send keeps its planned time.

export class ArrivalSchedule {
  private t0 = 0;
  /** The next send to make. */
  next = 0;
  /** Sends allowed in all (with -a); Infinity for a timed run. */
  limit = Infinity;

  /** @param interval ms between sends; @param offsetMs shift so workers interleave. */
  constructor(
    private readonly interval: number,
    private readonly offsetMs: number,
  ) {}

  start(now: number): void {
    this.t0 = now + this.offsetMs;
  }

  dueAt(k: number): number {
    return this.t0 + k * this.interval;
  }

  get exhausted(): boolean {
    return this.next >= this.limit;
  }

  /** From now on, send exactly `amount` more. */
  allow(amount: number): void {
    this.limit = this.next + amount;
  }

  /** Planned sends in [from, end) and those due before `end` never made. */
  totals(from: number, end: number): { intended: number; dropped: number } {
    const dueBy = (t: number) => Math.min(this.limit, Math.max(0, Math.ceil((t - this.t0) / this.interval)));
    const endK = dueBy(end);
    return { dropped: Math.max(0, endK - this.next), intended: Math.max(0, endK - dueBy(from)) };
  }
}
