// Shared by the faults that need an ApiProxy (watch-errors, list-cut): every slot's TcpRelay
// is pointed at a proxy that serves the API server's own certificate, so the operators notice
// nothing but their connections closing once (cleanly, as an API server going away does) and
// coming back through it. `unroute` points them back and closes the proxy.
import { ApiProxy } from '@nestor/testing';

/**
 * Routes every slot through a new ApiProxy; resolves once `watch` (a request matcher) has a
 * watch open through it and a moment has passed for the others (a standby's, if it watches).
 */
export async function routeThroughProxy({ env, slots, sleep }, watch) {
  const proxy = await ApiProxy.start(env.kubeConfig, { certificate: await env.apiServerCertificate() });
  for (const slot of slots) {
    slot.relay.retarget(proxy.url);
    slot.relay.closeAll();
  }
  for (let waited = 0; proxy.watching(watch) === 0; waited += 100) {
    if (waited > 60_000) throw new Error('no watch came back through the proxy in 60 s');
    await sleep(100);
  }
  await sleep(2_000);
  return proxy;
}

export async function unroute({ env, slots }, proxy) {
  for (const slot of slots) {
    slot.relay.retarget(env.server);
    slot.relay.closeAll();
  }
  await proxy?.close();
}

/** Resolves once every fault handle was hit as often as asked; rejects after `timeoutMs`. */
export async function allHit(handles, sleep, timeoutMs = 60_000) {
  for (let waited = 0; handles.some(([handle, times]) => handle.hits < times); waited += 100) {
    if (waited > timeoutMs) {
      throw new Error(
        `faults not all delivered in ${timeoutMs} ms: ${handles.map(([h, t]) => `${h.hits}/${t}`).join(', ')}`,
      );
    }
    await sleep(100);
  }
}

/** A Status as the API server writes one. */
export const status = (code, reason, message, extra = {}) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  code,
  reason,
  message,
  ...extra,
});
