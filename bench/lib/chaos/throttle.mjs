// The API server throttles the operator: API Priority and Fairness (a FlowSchema on the
// operator's ServiceAccounts, made at run time) serves its ConfigMap requests one at a time
// and answers the rest at once with 429 and Retry-After: 1 (its Lease is not throttled).
// Every spec changes meanwhile; the limit lifts after THROTTLE_MS; convergence is measured
// from the lift. From the audit log: the operator's writes and 429s while throttled, the
// shortest time it took to send a write again after a 429 (client-go and Nestor wait
// Retry-After), and its writes in the first 5 s after the lift (a storm shows there).
// Needs from ctx: env (TestEnvironment with auditLog, and throttle() from @nestor/testing),
// namespace (the slots' ServiceAccounts live there), names, path, v, bump, note, log, sleep.
export const name = 'throttle';
export const title =
  "API Priority and Fairness throttles the operator's ConfigMap requests (one at a time, the rest 429, Retry-After: 1) for 8 s while every spec changes, then lifts";
export const modes = ['single', 'replicas'];
export const order = 70;

/**
 * Shorter than the work: the one seat passes ~200 writes/s here, so in 20 s (until
 * 2026-11-27) nearly every object converged before the lift and the row measured the last
 * handful. In 8 s most of the 2,000 are still to do at the lift: the row measures how an
 * operator comes back from 429s (backoffs, requeues) with a backlog.
 */
const THROTTLE_MS = 8_000;

/** Microseconds since the epoch of an audit timestamp (RFC 3339 with microseconds). */
function micros(timestamp) {
  const [seconds, fraction = ''] = timestamp.replace(/Z$/, '').split('.');
  return Date.parse(`${seconds}Z`) * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

/** The last injection's window (Date.now() ms), for after(). */
let span;

export async function inject({ env, namespace, names, path, v, bump, note, log, sleep }) {
  const lift = await env.throttle({ serviceAccountsOf: namespace }, [{ apiGroup: '', resource: 'configmaps' }]);
  const throttledAt = Date.now();
  try {
    await bump(v); // the harness's own writes are not throttled (it is not in the namespace's ServiceAccounts)
    await sleep(Math.max(0, throttledAt + THROTTLE_MS - Date.now()));
  } finally {
    await lift();
  }
  const liftedAt = Date.now();
  const list = await env.client.request('GET', path());
  const early = list.items.filter((cm) => cm.metadata.annotations?.['nestor.test/observed'] === String(v)).length;
  log(
    `throttle: lifted after ${((liftedAt - throttledAt) / 1000).toFixed(1)} s; ${early} of ${names.length} had converged`,
  );
  note('convergedWhileThrottled', early);
  span = { throttledAt, liftedAt };
  return liftedAt;
}

/** What the audit log says about the operator's writes while throttled and just after. */
export async function after({ env, namespace, note, log }) {
  const events = (await env.auditEvents()).filter(
    (e) =>
      e.objectRef?.resource === 'configmaps' &&
      e.objectRef?.namespace === namespace &&
      e.verb === 'patch' &&
      e.user.username.startsWith(`system:serviceaccount:${namespace}:`),
  );
  const { throttledAt, liftedAt } = span;
  const at = (e) => micros(e.requestReceivedTimestamp) / 1000;
  const during = events.filter((e) => at(e) >= throttledAt && at(e) < liftedAt);
  const rejected = during.filter((e) => e.responseStatus?.code === 429);
  // Per object and user, the time from a 429's answer to the next write of that object.
  const byObject = new Map();
  for (const e of events.filter((e) => at(e) >= throttledAt)) {
    const key = `${e.user.username}/${e.objectRef.name}`;
    byObject.set(key, [...(byObject.get(key) ?? []), e]);
  }
  let soonestMs = Infinity;
  let soonerThanAsked = 0;
  for (const list of byObject.values()) {
    list.sort((a, b) => at(a) - at(b));
    list.forEach((e, i) => {
      const next = list[i + 1];
      if (e.responseStatus?.code !== 429 || !next) return;
      const gap = at(next) - micros(e.stageTimestamp) / 1000;
      soonestMs = Math.min(soonestMs, gap);
      if (gap < 998) soonerThanAsked++;
    });
  }
  const firstSeconds = events.filter((e) => at(e) >= liftedAt && at(e) < liftedAt + 5_000).length;
  note('writesWhileThrottled', during.length);
  note('answered429', rejected.length);
  note('soonestRetryAfter429Ms', Number.isFinite(soonestMs) ? Math.round(soonestMs) : null);
  note('retriesSoonerThanRetryAfter', soonerThanAsked);
  note('writesFirst5sAfterLift', firstSeconds);
  log(
    `throttle: ${during.length} writes while throttled, ${rejected.length} answered 429; soonest write after a 429: ${Number.isFinite(soonestMs) ? soonestMs.toFixed(0) : '–'} ms (${soonerThanAsked} sooner than Retry-After); ${firstSeconds} writes in the 5 s after the lift`,
  );
}
