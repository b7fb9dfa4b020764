// The webhook peers' side of the line protocol (bench/lib/webhook-scenarios.mjs is the other):
//   child -> parent: {ev: 'hello', pid} | {ev: 'ready', port} | {ev: 'stats', cpuUs, rss, maxRss, reviews, conversions}
//   parent -> child: {cmd: 'stats'} | {cmd: 'exit'}
import { cpuUs, memory, onCommands, send } from '../operators/protocol.mjs';

export { args, fail, send } from '../operators/protocol.mjs';

/** Review counters the peer bumps; sent with 'stats'. */
export const counters = { reviews: 0, conversions: 0, objects: 0, connections: 0 };

export function serveCommands() {
  onCommands((command) => {
    if (command.cmd === 'stats') send({ ev: 'stats', ...memory(command.gc), cpuUs: cpuUs(), ...counters });
  });
}
