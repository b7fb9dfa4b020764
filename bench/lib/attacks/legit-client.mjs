// The legitimate client of the attack suite, in a worker thread so that the attacker's work
// on the main thread (TLS handshakes, megabytes of body) cannot delay it: a normal UPDATE
// AdmissionReview (bench/lib/admission-load.mjs) every `intervalMs`, each on its own
// schedule whatever the earlier ones do. On 'stop' it waits up to `drainMs` for the reviews
// still unanswered, then posts what it saw: sent, answered (200, allowed, same uid), the
// latencies, and the longest wait (an unanswered review counts from its send to the end).
// It connects from its own address (LEGIT_ADDRESS), as the API server is not the attacker's pod.
import { parentPort, workerData } from 'node:worker_threads';
import { reviewClient } from '../admission-load.mjs';
import { percentile, sleep } from '../common.mjs';

const { host, port, ca, path, intervalMs, localAddress } = workerData;
const client = reviewClient({ host, port, path, ca, maxSockets: 64, localAddress });
const pending = new Set();
const latMs = [];
let sent = 0;
let failed = 0;
let stopping;
/** The slowest answered review: how long, and when it was due (ms since the client began). */
const slowest = { ms: 0, sentAtMs: NaN };

parentPort.on('message', (message) => {
  if (message.cmd === 'stop') stopping = message;
});

const t0 = performance.now();
while (!stopping) {
  const scheduled = t0 + sent * intervalMs;
  sent++;
  const review = { sentAt: scheduled };
  review.done = client.post().then((ok) => {
    pending.delete(review);
    const waited = performance.now() - scheduled;
    if (ok) latMs.push(waited);
    else failed++;
    if (ok && waited > slowest.ms) Object.assign(slowest, { ms: waited, sentAtMs: scheduled - t0 });
  });
  pending.add(review);
  await sleep(Math.max(1, t0 + sent * intervalMs - performance.now()));
}
const stopAt = performance.now();
await Promise.race([Promise.all([...pending].map((r) => r.done)), sleep(stopping.drainMs)]);
const end = performance.now();
const unanswered = [...pending];
latMs.sort((a, b) => a - b);
parentPort.postMessage({
  sent,
  answered: latMs.length,
  failed,
  unanswered: unanswered.length,
  p50Ms: percentile(latMs, 50),
  p99Ms: percentile(latMs, 99),
  maxMs: Math.max(latMs.at(-1) ?? 0, ...unanswered.map((r) => end - r.sentAt)),
  slowestAnsweredAtMs: slowest.sentAtMs,
  startedAtMs: performance.timeOrigin + t0,
  drainMs: end - stopAt,
});
client.close();
process.exit(0);
