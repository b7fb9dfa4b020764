import type { Connectivity } from './connectivity.js';

/**
 * A request sent while the API server did not answer was still pending when the outage gate
 * found the server ready: abandoned, and sent again at once. A kube-apiserver that is still
 * starting accepts connections and holds their requests; a LIST of a custom resource held so
 * came back 4 s after the server's /readyz said 200, when one sent after it came back at once.
 */
export class SentDuringOutage extends Error {
  override readonly name = 'SentDuringOutage';
}

/**
 * Call as a request is sent. During an outage (no response since the gate last found the
 * server ready), calls `resend` when the gate does, unless the returned `answered` was
 * called first (the answer began) or `signal` aborted. Outside an outage, undefined: the
 * server serves, and what it holds it holds for a reason of its own.
 */
export function resendWhenReady(
  connectivity: Pick<Connectivity, 'whenReady' | 'inOutage'> | undefined,
  resend: (reason: SentDuringOutage) => void,
  signal?: AbortSignal,
): (() => void) | undefined {
  if (!connectivity?.inOutage) return undefined;
  const answered = new AbortController();
  void connectivity.whenReady(signal ? AbortSignal.any([answered.signal, signal]) : answered.signal).then(() => {
    if (answered.signal.aborted || signal?.aborted) return;
    resend(
      new SentDuringOutage(
        'sent while the API server did not answer and still pending now that it is ready; sending it again',
      ),
    );
  });
  return () => answered.abort();
}
