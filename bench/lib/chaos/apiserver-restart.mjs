// kube-apiserver SIGKILLed, down 3 s, started again on the same etcd.
export const name = 'apiserver-restart';
export const title = 'API server killed, down 3 s, restarted';
export const modes = ['single', 'replicas'];
export const order = 10;

export async function inject({ env }) {
  await env.restartApiServer({ kill: true, downtimeMs: 3_000 });
  return Date.now();
}
