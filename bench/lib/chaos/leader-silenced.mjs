// Every connection of the leader stops forwarding (a NAT that lost its state); nothing closed.
// With a standby: the leader's renewals hang, it steps down, the standby takes over. (One
// process alone: the half-open row.)
export const name = 'leader-silenced';
export const title = 'every connection of the leader silently dropped (a relay stops forwarding, closes nothing)';
export const modes = ['replicas'];
export const order = 60;

export async function inject({ leader }) {
  (await leader()).relay.silence();
  return Date.now();
}
