// No fault: every spec changes on a converged, idle operator (the baseline of the rows below).
export const name = 'spec-change';
export const title = 'none (every object reconciled once, then a spec change)';
export const modes = ['single', 'replicas'];
export const order = 0;

export async function inject() {
  return Date.now();
}
