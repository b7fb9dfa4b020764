// A relist that fails in the middle: every watch ends with 410 Expired (the real "too old
// resource version", as after etcd compacts), and the LIST each operator sends then is cut
// 30 kB into its body (a load balancer dropping the connection mid-response), and the
// relist's next request, whatever it is, is answered 500 once. Nestor's consistent relists
// come in pages of 500; controller-runtime relists as a streaming list (a watch with
// sendInitialEvents=true), whose stream is cut 30 kB in instead, and falls back to a LIST.
// Until session 13 the 500 went to a LIST asking for a later page: only Nestor sent one, so
// only Nestor met the second failure and its backoff. Through an ApiProxy (packages/testing)
// in each slot's route; the specs change once the relists are cut.
import { allHit, routeThroughProxy, status, unroute } from './_api-proxy-route.mjs';

export const name = 'list-cut';
export const title = 'every watch ended with 410 Expired, then the relist cut mid-body (and a later page answered 500)';
export const modes = ['single', 'replicas'];
export const order = 90;

let proxy;

export async function inject(ctx) {
  const { path, sleep, note } = ctx;
  const configMaps = (r) => r.watch && r.path === path();
  proxy = await routeThroughProxy(ctx, configMaps);
  const watches = proxy.watching(configMaps);
  const list = (r) => !r.watch && r.method === 'GET' && r.path === path();
  // client-go relists as a streaming list (a watch with sendInitialEvents) where the server
  // serves one, as this one does: that stream is the relist to cut, as the first page is.
  const streamingList = (r) => configMaps(r) && r.query.get('sendInitialEvents') === 'true';
  const cut = proxy.inject({
    match: (r) => (list(r) && !r.query.has('continue')) || streamingList(r),
    times: watches,
    fault: { cutAfterBytes: 30_000 },
  });
  const page = proxy.inject({
    match: (r) => cut.hits >= watches && (list(r) || streamingList(r)),
    fault: { answer: { status: 500, body: status(500, 'InternalError', 'etcdserver: request timed out') } },
  });
  const broken = proxy.breakWatches(
    status(410, 'Expired', 'The resourceVersion for the provided watch is too old.'),
    configMaps,
  );
  await allHit([[cut, watches]], sleep);
  const ended = Date.now();
  note('watchesBroken', broken);
  note('listsCut', cut.hits);
  note('pagesFailed', page.hits);
  return ended;
}

export async function after(ctx) {
  ctx.note('listRequestsThroughProxy', proxy.requests.filter((r) => !r.watch && r.path === ctx.path()).length);
  await unroute(ctx, proxy);
  proxy = undefined;
}
