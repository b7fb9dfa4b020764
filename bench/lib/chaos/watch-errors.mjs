// Watches ended by ERROR events other than 410, as real API servers send them, while every
// spec changes: a 500 when the etcd watch under the API server fails ("etcdserver: no
// leader"), then, on the watch that resumes, a 504 "Too large resource version" (an API
// server behind the client, as after a failover to a lagging one) twice, then an ERROR whose
// object is no Status (a broken proxy's). Through an ApiProxy (packages/testing) in each
// slot's route. Nestor resumes after the first (at once: an isolated etcd hiccup) and relists
// after the second at one resourceVersion; client-go's reflector relists after each.
// The specs change during the errors, and the clock starts when the last spec was written:
// each operator has every change to catch up on, through the errors still to come. Timed
// from the last ERROR instead, an operator that waits longer between watches met it later
// and looked done at once (0.1 s). Changed after the errors, as until session 12, an
// operator in a longer backoff found the driver's writes done and listed them at once, while
// one that resumed at once reconciled beside the writes on the same two cores:
// controller-runtime converged faster with this fault than without any (12.0 against 17.7 s),
// and the row measured contention, not recovery.
import { allHit, routeThroughProxy, status, unroute } from './_api-proxy-route.mjs';

export const name = 'watch-errors';
export const title =
  'every watch ended by ERROR events other than 410 while every spec changes: a 500 (etcd), a 504 "too large resource version" twice, an ERROR with no Status';
export const modes = ['single', 'replicas'];
export const order = 80;

/**
 * How long each ERROR may wait for the watch it ends: client-go's reflector backs off up to
 * 60 s (30 s and its jitter) when its faults come within its 2-minute reset, as repeated
 * runs do, and the row measures that rather than failing on it.
 */
const DELIVERY_TIMEOUT_MS = 150_000;

let proxy;
/** Date.now() when the first ERROR was sent: the chain's requests are timed from it. */
let brokeAt;

export async function inject(ctx) {
  const { path, sleep, note, bump, v } = ctx;
  const configMaps = (r) => r.watch && r.path === path();
  proxy = await routeThroughProxy(ctx, configMaps);
  const listsBefore = proxy.requests.filter((r) => !r.watch && r.path === path()).length;
  brokeAt = Date.now();
  const watches = proxy.breakWatches(status(500, 'InternalError', 'etcdserver: no leader'), configMaps);
  const written = bump(v).then(() => Date.now());
  const tooLarge = proxy.inject({
    match: configMaps,
    times: 2 * watches,
    fault: {
      errorEvent: status(504, 'Timeout', 'Too large resource version: 4294967295, current: 1', {
        details: {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
          retryAfterSeconds: 1,
        },
      }),
    },
  });
  await allHit([[tooLarge, 2 * watches]], sleep, DELIVERY_TIMEOUT_MS);
  const noStatus = proxy.inject({
    match: configMaps,
    times: watches,
    fault: { errorEvent: 'upstream connect error or disconnect/reset before headers', afterEvents: 0 },
  });
  await allHit([[noStatus, watches]], sleep, DELIVERY_TIMEOUT_MS);
  const ended = await written;
  note('watchesBroken', watches);
  note('listsDuringFault', proxy.requests.filter((r) => !r.watch && r.path === path()).length - listsBefore);
  return ended;
}

export async function after(ctx) {
  const lists = proxy.requests.filter((r) => !r.watch && r.path === ctx.path()).length;
  const watchRequests = proxy.requests.filter((r) => r.watch && r.path === ctx.path()).length;
  ctx.note('listRequestsThroughProxy', lists);
  ctx.note('watchRequestsThroughProxy', watchRequests);
  // Each implementation's chain side by side: every ConfigMap LIST (L) and WATCH (W, S for a
  // streaming list) from the first ERROR on, seconds after it.
  ctx.note(
    'chain',
    proxy.requests
      .filter((r) => r.path === ctx.path() && r.at >= brokeAt)
      .map((r) => {
        const kind = !r.watch ? 'L' : r.query.get('sendInitialEvents') === 'true' ? 'S' : 'W';
        return `${kind}+${((r.at - brokeAt) / 1000).toFixed(2)}`;
      })
      .join(' '),
  );
  await unroute(ctx, proxy);
  proxy = undefined;
}
