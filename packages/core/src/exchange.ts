import type { IncomingHttpHeaders } from 'node:http';
import type https from 'node:https';
import tls from 'node:tls';
import type { Credentials } from './kubeconfig-credentials.js';

/**
 * The seam between the Transport and a protocol, as client-go's RoundTripper: the Transport
 * owns what every request shares (auth and its refresh, the retry rules, the deadline, the
 * abort signal, errors and connectivity); an `Exchanger` owns connections (HTTP/1.1 pools,
 * HTTP/2 sessions) and turns one request into one `Exchange`.
 */
export interface Exchanger {
  /** Sends `request` now; its answer comes through the exchange. */
  open(request: OutgoingRequest): Exchange;
  /** 'h2' once a connection negotiated it, 'http/1.1' when that is the path, undefined before the first connection. */
  readonly protocol: 'h2' | 'http/1.1' | undefined;
  /** New TLS material: drops every connection made with the old (as client-go on certificate rotation). */
  rotate(credentials: Credentials): void;
  /** Closes every connection for good. */
  close(): void;
}

/** One request made concrete: the Transport added auth, Accept and Content-Type. */
export interface OutgoingRequest {
  method: string;
  /** Path and query, with the server URL's path prefix. */
  target: string;
  headers: Record<string, string | number>;
  payload: Buffer | undefined;
  /** Held open for minutes (a watch): HTTP/1.1 gives it a connection of its own pool. */
  watch: boolean;
}

export interface ResponseHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/**
 * One request on one connection, from its send to the end of its body. It keeps no timer and
 * no signal: the Transport calls `expire` or `cut`, and `release` once done with it.
 */
export interface Exchange {
  /** The response head; rejects when no answer came. */
  readonly head: Promise<ResponseHead>;
  /** The body as it arrives (once the head came); throws when the connection broke before its end. */
  readonly body: AsyncIterable<Buffer>;
  /** Reads the whole body (once the head came). */
  readBody(): Promise<Buffer>;
  /**
   * The failure (of `head`) shows the request never reached the server's handler, or it is
   * a read safe to send twice: send it again, once.
   */
  resendable(error: unknown): boolean;
  /**
   * The failure is the server ending this request over a connection that works (HTTP/2:
   * RST_STREAM, as kube-apiserver ends a request whose own timeout fired): it spoke, it is
   * not gone.
   */
  resetByServer(error: unknown): boolean;
  /** The answer is not wanted (it is sent again): frees the connection for the next request. */
  discard(): void;
  /** The deadline passed: ends the exchange, and suspects the connection if no answer came at all. */
  expire(): void;
  /** Ends the exchange now (an abort), leaving the connection to others if it can. */
  cut(): void;
  /** Done with it: a body not read to its end is cut. */
  release(): void;
}

/** Thrown by an exchange whose server chose HTTP/1.1 in ALPN: the request was not sent; the exchanger now uses HTTP/1.1. */
export class ProtocolFallback extends Error {}

/**
 * The TLS options of every connection: the CA, client certificate and key parsed once into
 * one SecureContext. Given as ca/cert/key, https.Agent would copy them into every request's
 * options and stringify them into its pool key (getName) on every request and socket
 * release, and tls.connect would parse them again for every new connection.
 */
export function tlsOptions(secure: boolean, credentials: Credentials): https.AgentOptions {
  const { ca, cert, key, pfx, passphrase, ...rest } = credentials.tls;
  if (!secure) return credentials.tls;
  const material = Object.fromEntries(
    Object.entries({ ca, cert, key, pfx, passphrase }).filter(([, value]) => value !== undefined),
  );
  return { ...rest, secureContext: tls.createSecureContext(material) };
}
