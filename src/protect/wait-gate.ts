// How long has the request being handled right now waited since it reached the server? The
// per-request bound behind the event-loop delay signal of hotpath/protect.
//
// A request read in this loop turn's poll arrived after the previous turn's poll (otherwise that
// poll would have read it), and after the loop last sat idle in epoll (had it arrived before,
// the idle wait would have ended for it). So for any reference point R that is no later than the
// previous poll:
//
//   wait  <=  now - R.time - (idle time since R) - (time spent writing 503s since R)
//
// The 503 time is left out on purpose: otherwise shedding a backlog makes the next requests
// look late, which sheds them too, and the guard locks a starved server out of useful work.
//
// References, newest valid one wins:
// - the first request seen in a turn (about when that turn's poll returned): valid from the
//   next turn on, so it is promoted by a setImmediate (check phase) armed by that request. The
//   immediate is armed only from the request path, never re-armed by itself: a pending
//   immediate stops the loop from blocking in poll, so a self-re-arming one would spin.
// - the previous tick of the sampling timer: the poll of the turn that ran it came after it,
//   so it is a valid reference even when no request came for a while.
// The per-request cost is one clock read when the bound is under the limit; the idle time
// (a native call) is read only when the coarse bound is over it.

import { performance } from 'node:perf_hooks';

interface Reference {
  time: number;
  /** performance.nodeTiming.idleTime at `time`. */
  idle: number;
  /** shedTotal at `time`. */
  shed: number;
}

const idleTime = (): number => performance.nodeTiming.idleTime;

export class WaitGate {
  /** Ms spent writing shed responses, cumulative. */
  private shedTotal = 0;
  private ref: Reference;
  /** The reference the next tick promotes: this tick's time. */
  private lastTick: Reference;
  /** The first request of the current turn, or undefined before it. */
  private turn: Reference | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor() {
    const now = performance.now();
    this.ref = { time: now, idle: idleTime(), shed: 0 };
    this.lastTick = this.ref;
  }

  /** Adds time spent answering a shed request; it never counts as waiting. */
  addShedTime(ms: number): void {
    this.shedTotal += ms;
  }

  /** The sampling timer ran: the previous tick becomes a valid reference. */
  tick(now: number): void {
    this.promote(this.lastTick);
    this.lastTick = { time: now, idle: idleTime(), shed: this.shedTotal };
  }

  /**
   * The wait bound of a request being handled now, but only as far as needed to compare it with
   * `limit`: returns true when it is over. Marks the turn (called from the request path).
   */
  over(limit: number, now: number): boolean {
    if (this.turn === undefined) {
      this.turn = { time: now, idle: 0, shed: this.shedTotal };
      this.immediate = setImmediate(this.endTurn).unref();
    }
    return this.bound(limit, now);
  }

  /** Like over(), without marking the turn: for status reads outside a request. */
  peekOver(limit: number, now: number): boolean {
    return this.bound(limit, now);
  }

  /** The current bound in ms (idle read included): for status(). */
  wait(now: number): number {
    const r = this.ref;
    return Math.max(0, now - r.time - (this.shedTotal - r.shed) - (idleTime() - r.idle));
  }

  close(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.turn = undefined;
  }

  private bound(limit: number, now: number): boolean {
    const r = this.ref;
    const coarse = now - r.time - (this.shedTotal - r.shed);
    if (coarse <= limit) return false;
    return coarse - (idleTime() - r.idle) > limit;
  }

  /** Check phase of a turn that saw requests: its first request becomes the reference. */
  private readonly endTurn = (): void => {
    const turn = this.turn;
    this.turn = undefined;
    this.immediate = undefined;
    if (turn === undefined) return;
    // No idle between the poll returning and now, so the idle time now is the idle time then.
    turn.idle = idleTime();
    this.promote(turn);
  };

  private promote(r: Reference): void {
    if (r.time > this.ref.time) this.ref = r;
  }
}
