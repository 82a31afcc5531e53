// How long has the request being handled right now waited since it reached the server? The
// per-request bound behind the event-loop delay signal of hotpath/protect.
//
// A request on a connection the loop already watches is read by the first poll after it
// arrived. A request on a new connection is read one poll later: the poll that accepts the
// connection does not read it yet. Either way, a request read in loop turn N arrived after the
// poll of turn N-2 (or after the loop last sat idle in epoll: had it arrived before, the idle
// wait would have ended for it). So for any reference point R no later than that poll:
//
//   wait  <=  now - R.time - (idle time since R) - (time spent writing 503s since R)
//
// The 503 time is left out on purpose: otherwise shedding a backlog makes the next requests
// look late, which sheds them too, and the guard locks a starved server out of useful work.
//
// References, newest valid one wins:
// - the first request seen in a turn (about when that turn's poll returned) once the loop is
//   busy (the coarse bound past half the limit). It becomes the reference at the check phase of
//   the *next* turn that sees requests (so at least one whole turn lies between it and any
//   request judged by it), through a setImmediate armed by that turn's first request. The
//   immediate is armed only from the request path, never re-armed by itself: a pending
//   immediate stops the loop from blocking in poll, so a self-re-arming one would spin.
// - the sampling timer's tick from two ticks ago: ticks run in distinct turns, each before its
//   turn's poll, so it is at least two polls old even when no request came for a while.
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
  /** The last two ticks, newest last: the next tick promotes the older one. */
  private olderTick: Reference;
  private newerTick: Reference;
  /** The first request of the current turn, or undefined before it. */
  private turn: Reference | undefined;
  /** The first request of the last turn that saw requests: promoted at the next such turn's check phase. */
  private pendingTurn: Reference | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor() {
    const now = performance.now();
    this.ref = { time: now, idle: idleTime(), shed: 0 };
    this.olderTick = this.ref;
    this.newerTick = this.ref;
  }

  /** Adds time spent answering a shed request; it never counts as waiting. */
  addShedTime(ms: number): void {
    this.shedTotal += ms;
  }

  /** The sampling timer ran: the tick from two ticks ago becomes a valid reference. */
  tick(now: number): void {
    this.promote(this.olderTick);
    this.olderTick = this.newerTick;
    this.newerTick = { time: now, idle: idleTime(), shed: this.shedTotal };
  }

  /**
   * The wait bound of a request being handled now, but only as far as needed to compare it with
   * `limit`: returns true when it is over. Called from the request path: once the coarse bound
   * passes half the limit, it marks the turn, so that the references keep up with a busy loop.
   * Below that the timer's references are fresh enough and a request costs one clock read.
   */
  over(limit: number, now: number): boolean {
    const coarse = this.coarse(now);
    if (coarse <= limit / 2) return false;
    if (this.turn === undefined) {
      this.turn = { time: now, idle: 0, shed: this.shedTotal };
      this.immediate = setImmediate(this.endTurn).unref();
    }
    return this.exceeds(coarse, limit);
  }

  /** Like over(), without marking the turn: for status reads outside a request. */
  peekOver(limit: number, now: number): boolean {
    return this.exceeds(this.coarse(now), limit);
  }

  /** Ms spent writing shed responses since the sampling timer last ticked. */
  shedSinceTick(): number {
    return this.shedTotal - this.newerTick.shed;
  }

  close(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.turn = undefined;
    this.pendingTurn = undefined;
  }

  /** The bound without the idle time: one clock read's worth of work. */
  private coarse(now: number): number {
    const r = this.ref;
    return now - r.time - (this.shedTotal - r.shed);
  }

  /** Over the limit even with the idle time since the reference taken off (read only when needed). */
  private exceeds(coarse: number, limit: number): boolean {
    return coarse > limit && coarse - (idleTime() - this.ref.idle) > limit;
  }

  /** Check phase of a turn that saw requests: the previous such turn becomes the reference. */
  private readonly endTurn = (): void => {
    const turn = this.turn;
    this.turn = undefined;
    this.immediate = undefined;
    if (turn === undefined) return;
    // No idle between the poll returning and now, so the idle time now is the idle time then.
    turn.idle = idleTime();
    if (this.pendingTurn !== undefined) this.promote(this.pendingTurn);
    this.pendingTurn = turn;
  };

  private promote(r: Reference): void {
    if (r.time > this.ref.time) this.ref = r;
  }
}
