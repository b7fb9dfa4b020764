// Issue 27's restart row: API server killed and restarted, etcd compacted, the leader
// SIGKILLed and started again while the API server restarts, every spec changed, then a
// restart and a compaction again; measured from the end of that last fault. The restarted
// process's start-up (its log lines and protocol events, on the harness's clock) is kept
// as this round's timeline: where a slow run's seconds went.
export const name = 'restart-outage';
export const title =
  'API server killed and restarted, etcd compacted, the leader SIGKILLed and started again while the API server restarts, specs changed, restart + compaction again';
export const modes = ['single', 'replicas'];
export const order = 40;

let marks;

export async function inject({ env, leader, slots, bump, v, log }) {
  const at = () => Date.now();
  marks = { start: at() };
  await env.restartApiServer({ kill: true, downtimeMs: 3_000 });
  await env.compactEtcd();
  const slot = await leader();
  const killed = slot.process;
  marks.killed = at();
  killed.signal('SIGKILL');
  const restart = env.restartApiServer({ kill: true, downtimeMs: 2_000 });
  await killed.exited; // the supervisor starts it again a second later, during the restart
  await restart;
  marks.restarted = at();
  await bump(v);
  marks.bumped = at();
  await env.restartApiServer({ kill: true, downtimeMs: 3_000 });
  await env.compactEtcd();
  marks.ended = at();
  marks.slot = slot;
  marks.killedProcess = killed;
  marks.others = slots.filter((s) => s !== slot);
  log(`restart-outage: the last fault ended ${((marks.ended - marks.killed) / 1000).toFixed(1)} s after the kill`);
  return marks.ended;
}

/** The restarted process's start-up, in seconds from the end of the last fault. */
export async function after({ note }) {
  const { slot, killedProcess, ended } = marks;
  const s = (t) => Number(((t - ended) / 1000).toFixed(2));
  const started = slot.process !== killedProcess ? slot.process : undefined;
  const timeline = [
    [s(marks.start), 'row starts: API server killed'],
    [s(marks.killed), 'operator SIGKILLed, API server killed'],
    [s(marks.restarted), 'API server back'],
    [s(marks.bumped), 'specs changed; API server killed, then compaction'],
    [0, 'last fault ended'],
  ];
  if (started) {
    timeline.push([s(started.spawnedAt), 'operator process spawned']);
    started.output.forEach((line, i) => {
      if (line.trim())
        timeline.push([s(started.outputAt[i]), `log: ${line.replace(/^\[Nest\][^\]]*\]\s*/, '').slice(0, 200)}`]);
    });
    const ready = started.events.find((e) => e.event === 'ready');
    if (ready) timeline.push([s(ready.at), "event 'ready' (Nest: application context created)"]);
    const first = started.events.find((e) => e.event === 'start');
    if (first) timeline.push([s(first.at), 'first reconcile started']);
    const firstAfter = started.events.find((e) => e.event === 'start' && e.at >= ended);
    if (firstAfter && firstAfter !== first) timeline.push([s(firstAfter.at), 'first reconcile after the last fault']);
  }
  for (const other of marks.others) {
    const first = other.process.events.find((e) => e.event === 'start' && e.at >= marks.killed);
    if (first) timeline.push([s(first.at), `${other.name}: first reconcile after the kill`]);
  }
  note(
    'timeline',
    timeline.sort((a, b) => a[0] - b[0]),
  );
}
