// The leader cut off from the API server (new connections too) while the standby runs.
export const name = 'leader-partitioned';
export const title = 'the leader partitioned from the API server while the standby runs';
export const modes = ['replicas'];
export const order = 70;

let partitioned;

export async function inject({ leader }) {
  partitioned = await leader();
  partitioned.relay.partition();
  return Date.now();
}

export async function after() {
  partitioned?.relay.heal();
  partitioned = undefined;
}
