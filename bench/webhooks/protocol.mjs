// The webhook peers' side of the line protocol (bench/lib/webhook-scenarios.mjs is the other):
//   child -> parent: {ev: 'hello', pid} | {ev: 'ready', port}
//                    | {ev: 'stats', cpuUs, rss, maxRss, reviews, conversions, loopMaxMs}
//   parent -> child: {cmd: 'stats', resetLoop?} | {cmd: 'exit'}
// loopMaxMs is the longest event-loop stall since the last resetLoop (the attack suite,
// bench/attack.mjs, reads it after each attack: a stall shows once the loop turns again).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cpuUs, memory, onCommands, send } from '../operators/protocol.mjs';

export { args, fail, send } from '../operators/protocol.mjs';

/** Review counters the peer bumps; sent with 'stats'. */
export const counters = { reviews: 0, conversions: 0, objects: 0, connections: 0 };

const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

export function serveCommands() {
  onCommands((command) => {
    if (command.cmd !== 'stats') return;
    send({ ev: 'stats', ...memory(command.gc), cpuUs: cpuUs(), ...counters, loopMaxMs: loop.max / 1e6 });
    if (command.resetLoop) loop.reset();
  });
}
