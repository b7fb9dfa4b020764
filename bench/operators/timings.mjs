// Where a reconcile's time goes, second by second: opt-in (BENCH_TIMINGS=file.json) for the
// operators driven by bench/run.mjs. Per second: reconciles started and finished, the workers
// busy at the sample, the mean wait of each request kind, and the lag from the driver's write
// to the reconcile's start (the watch's delivery plus the queue). Written on every `stats`.
import { writeFileSync } from 'node:fs';
import { nowUs } from '../lib/common.mjs';

export class Timings {
  /** `inFlight()`: the reconciles running now, sampled each second. */
  constructor(inFlight, file = process.env.BENCH_TIMINGS) {
    this.inFlight = inFlight;
    this.file = file;
    this.seconds = [];
    this.current = this.fresh();
    if (file) setInterval(() => this.roll(), 1000).unref();
  }

  get enabled() {
    return Boolean(this.file);
  }

  fresh() {
    return { at: nowUs(), started: 0, finished: 0, lagUs: [], requests: {} };
  }

  started(writtenAt) {
    if (!this.file) return;
    this.current.started++;
    if (writtenAt) this.current.lagUs.push(nowUs() - Number(writtenAt));
  }

  finished() {
    if (!this.file) return;
    this.current.finished++;
  }

  /** Times `run()` under `kind`. */
  async request(kind, run) {
    if (!this.file) return run();
    const start = performance.now();
    try {
      return await run();
    } finally {
      const r = (this.current.requests[kind] ??= { n: 0, ms: 0, maxMs: 0 });
      const ms = performance.now() - start;
      r.n++;
      r.ms += ms;
      r.maxMs = Math.max(r.maxMs, ms);
    }
  }

  roll() {
    const s = this.current;
    const lag = s.lagUs.sort((a, b) => a - b);
    this.seconds.push({
      at: s.at,
      started: s.started,
      finished: s.finished,
      inFlight: this.inFlight(),
      lagMsP50: lag.length ? Math.round(lag[lag.length >> 1] / 1000) : null,
      requests: Object.fromEntries(
        Object.entries(s.requests).map(([k, r]) => [
          k,
          { n: r.n, meanMs: +(r.ms / r.n).toFixed(1), maxMs: +r.maxMs.toFixed(1) },
        ]),
      ),
    });
    this.current = this.fresh();
  }

  write() {
    if (!this.file) return;
    writeFileSync(this.file, JSON.stringify({ pid: process.pid, seconds: this.seconds }, null, 1));
  }
}
