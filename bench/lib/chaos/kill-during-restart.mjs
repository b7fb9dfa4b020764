// The leader SIGKILLed; the supervisor starts it again while the API server restarts.
export const name = 'kill-during-restart';
export const title = 'the leader SIGKILLed and started again while the API server restarts';
export const modes = ['single', 'replicas'];
export const order = 30;

export async function inject({ env, leader }) {
  const killed = (await leader()).process;
  killed.signal('SIGKILL');
  const restart = env.restartApiServer({ kill: true, downtimeMs: 2_000 });
  await killed.exited; // the supervisor starts it again a second later, during the restart
  await restart;
  return Date.now();
}
