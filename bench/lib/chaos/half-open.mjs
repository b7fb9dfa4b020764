// The half-open fault of the chaos suite: every connection the operator has open to the API
// server is silently dropped (its relay stops forwarding in both directions and closes
// nothing, as a NAT or load balancer that lost its state); connections made afterwards are
// forwarded again. Nothing tells the operator: only its own liveness checks can find out
// (HTTP/2 PING, watch stall limits, request deadlines).
//
// ctx: { relay } (the TcpRelay the operator reaches the API server through; in the two
// replica suite, the leader's). Returns the time the fault ended (Date.now()): at once, the
// connections stay dead but new ones work.

/** Silences every open connection of `ctx.relay` (a TcpRelay, or a ThreadedRelay); returns when the fault ended. */
export async function halfOpen({ relay }) {
  await relay.silence();
  return Date.now();
}
