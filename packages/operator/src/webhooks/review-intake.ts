// How a review's body is taken in, with every bound an attacker who reaches the webhook port
// could otherwise push on: reviews in flight, body bytes in flight (all requests together),
// one body's size, a body that stalls or drips, and its shape (depth, containers) checked as
// the bytes arrive, before a byte is parsed. Nest-free: the Nest layer's server uses it, and
// so can any HTTP server that hands it Node's request objects.
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { MAX_OBJECT_DEPTH } from '@nestor/core';
import { JsonScanner, ReviewLimitError, type ReviewEnvelopeFields } from './json-scanner.js';
import { parseJsonPiecewise } from './piecewise-parse.js';
import { MalformedReviewError } from './review-envelope.js';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, DEFAULT_BODY_TIMEOUT_MS } from './review-timeouts.js';

export { DEFAULT_BODY_IDLE_TIMEOUT_MS, DEFAULT_BODY_TIMEOUT_MS };

/** controller-runtime's cap: 2 × the API server's 3 MiB request limit + 1 MiB. */
export const DEFAULT_MAX_WEBHOOK_BODY = 7 * 1024 * 1024;
/**
 * Reviews taken in at once, read or being answered (default 64). The API server sends
 * each as its own request and retries a 429 within the webhook's timeout.
 */
export const DEFAULT_MAX_REVIEWS_IN_FLIGHT = 64;
/**
 * Body bytes held by all reviews in flight together (default 64 MiB: nine bodies at the
 * cap). One remote address may hold half of it, and half of the reviews in flight.
 */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/**
 * Objects and arrays in one review (default 250,000). The largest object etcd stores is
 * 1.5 MiB, and a review carries two; at the densest real shape (`{"k":"v"}`) that is
 * ~300,000, but real objects hold a small fraction of it. Each costs ~100 bytes once parsed.
 */
export const DEFAULT_MAX_REVIEW_CONTAINERS = 250_000;
/**
 * Values and keys in one review (default 1,000,000), containers included. A 1.5 MiB object
 * at its densest real shape (short unique keys, empty values) holds ~300,000; a review
 * carries two. Each costs 8 bytes (a small number) to ~50 (a key) once parsed, so a review
 * of numbers packed under the body cap (3.5 million) would hold 28 MB and churn far more.
 */
export const DEFAULT_MAX_REVIEW_VALUES = 1_000_000;
/**
 * Values and keys held by all reviews in flight together (default 2,000,000, one address
 * half of it): what bounds the parsed reviews' memory, as maxBodyBytesInFlight bounds
 * their bytes (~100 MB at the densest, keys).
 */
export const DEFAULT_MAX_VALUES_IN_FLIGHT = 2_000_000;
/** Containers this large are parsed child by child, so no single JSON.parse holds the loop long. */
const LARGE_CONTAINER_BYTES = 64 * 1024;

export interface ReviewIntakeLimits {
  maxBodyBytes?: number;
  maxReviewsInFlight?: number;
  maxBodyBytesInFlight?: number;
  maxContainers?: number;
  maxValues?: number;
  maxValuesInFlight?: number;
  bodyIdleTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/** A request refused before its review is parsed: the status to answer, why, and whether to drop the connection. */
export class IntakeRefusal extends Error {
  override readonly name = 'IntakeRefusal';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A body taken in: its value, or the limit it crossed with what the scanner read of its envelope. */
export type ReviewBody =
  | { value: unknown; refused?: undefined }
  | { refused: ReviewLimitError; envelope: ReviewEnvelopeFields; value?: undefined };

type BodyRequest = IncomingMessage | Http2ServerRequest;

/** One review's claim on the intake, released once it is answered or dropped. */
export interface IntakeTicket {
  release(): void;
}

export class ReviewIntake {
  readonly maxBodyBytes: number;
  private readonly maxReviews: number;
  private readonly maxBytesInFlight: number;
  private readonly maxContainers: number;
  private readonly maxValues: number;
  private readonly maxValuesInFlight: number;
  private readonly idleMs: number;
  private readonly deadlineMs: number;
  private reviews = 0;
  private bytes = 0;
  private values = 0;
  /** Per remote address, so one peer (a pod that reaches the port) cannot take all of any bound. */
  private readonly peers = new Map<string, { reviews: number; bytes: number; values: number }>();

  constructor(limits: ReviewIntakeLimits = {}) {
    this.maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY;
    this.maxReviews = limits.maxReviewsInFlight ?? DEFAULT_MAX_REVIEWS_IN_FLIGHT;
    this.maxBytesInFlight = Math.max(
      limits.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
      this.maxBodyBytes,
    );
    this.maxContainers = limits.maxContainers ?? DEFAULT_MAX_REVIEW_CONTAINERS;
    this.maxValuesInFlight = limits.maxValuesInFlight ?? DEFAULT_MAX_VALUES_IN_FLIGHT;
    // One review may take what one peer may hold, no more: else it could never be taken in.
    this.maxValues = Math.min(limits.maxValues ?? DEFAULT_MAX_REVIEW_VALUES, Math.ceil(this.maxValuesInFlight / 2));
    this.idleMs = limits.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS;
    this.deadlineMs = limits.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  }

  /** Reviews, body bytes and values held now (for metrics and tests). */
  get inFlight(): { reviews: number; bytes: number; values: number } {
    return { reviews: this.reviews, bytes: this.bytes, values: this.values };
  }

  /**
   * Takes the request's body in and parses it: the review as JSON.parse would give it, or
   * the shape limit it crossed. Rejects with IntakeRefusal when it must not be taken in at
   * all (too many in flight, too large, too slow); `ticket` is released by the caller once
   * the review is answered, as its parsed body lives until then.
   */
  async read(request: BodyRequest): Promise<{ body: ReviewBody; ticket: IntakeTicket }> {
    const address = request.socket?.remoteAddress ?? '';
    const peer = this.peers.get(address) ?? { reviews: 0, bytes: 0, values: 0 };
    // One peer gets half of each bound: an attacker's pod cannot starve the API server's reviews.
    if (this.reviews >= this.maxReviews || peer.reviews >= Math.ceil(this.maxReviews / 2)) {
      const whose = this.reviews >= this.maxReviews ? 'this webhook server' : 'one client';
      throw new IntakeRefusal(429, `the most reviews ${whose} may have in flight are in flight: retry`, {
        'retry-after': '1',
      });
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > this.maxBodyBytes) throw this.tooLarge();
    const peerBytes = Math.max(this.maxBodyBytes, this.maxBytesInFlight / 2);
    // A declared length is reserved whole before a byte is read: a body that would not fit
    // is refused unread, so a flood of large bodies costs no reading or decryption.
    if (this.bytes + declared > this.maxBytesInFlight || peer.bytes + declared > peerBytes) throw this.full();
    this.reviews++;
    peer.reviews++;
    this.peers.set(address, peer);
    let held = 0;
    let heldValues = 0;
    let released = false;
    const ticket: IntakeTicket = {
      release: () => {
        if (released) return;
        released = true;
        this.reviews--;
        this.bytes -= held;
        this.values -= heldValues;
        peer.reviews--;
        peer.bytes -= held;
        peer.values -= heldValues;
        if (peer.reviews === 0) this.peers.delete(address);
        held = 0;
        heldValues = 0;
      },
    };
    this.bytes += declared;
    peer.bytes += declared;
    held = declared;
    let received = 0;
    const peerValues = Math.ceil(this.maxValuesInFlight / 2);
    try {
      const { bytes, scanner, refused } = await this.collect(request, {
        bytes: (n) => {
          received += n;
          const more = received - held; // past what was reserved (no length declared, or more sent)
          if (more <= 0) return true;
          if (this.bytes + more > this.maxBytesInFlight || peer.bytes + more > peerBytes) return false;
          this.bytes += more;
          peer.bytes += more;
          held += more;
          return true;
        },
        // Values are counted as the scanner finds them, so the parsed reviews' memory is
        // bounded in all before any is parsed.
        values: (total) => {
          const more = total - heldValues;
          if (this.values + more > this.maxValuesInFlight || peer.values + more > peerValues) return false;
          this.values += more;
          peer.values += more;
          heldValues = total;
          return true;
        },
      });
      if (refused) return { body: { refused, envelope: scanner.envelope }, ticket };
      let value: unknown;
      try {
        value = await parseJsonPiecewise(bytes, { largeContainers: scanner.largeContainers });
      } catch (error) {
        throw new MalformedReviewError(`the body is not JSON: ${(error as Error).message}`);
      }
      return { body: { value }, ticket };
    } catch (error) {
      ticket.release();
      throw error;
    }
  }

  private full(): IntakeRefusal {
    return new IntakeRefusal(
      503,
      'the webhook server holds as many review bytes or values as it takes at once: retry',
      {
        'retry-after': '1',
      },
    );
  }

  private tooLarge(): IntakeRefusal {
    return new IntakeRefusal(413, `the body is larger than ${this.maxBodyBytes} bytes`);
  }

  /** The body's bytes, scanned as they come; past a shape limit the rest is drained, not kept. */
  private collect(
    request: BodyRequest,
    take: { bytes(count: number): boolean; values(total: number): boolean },
  ): Promise<{ bytes: Buffer; scanner: JsonScanner; refused?: ReviewLimitError }> {
    const scanner = new JsonScanner({
      maxDepth: MAX_OBJECT_DEPTH,
      maxContainers: this.maxContainers,
      maxValues: this.maxValues,
      largeContainerBytes: LARGE_CONTAINER_BYTES,
    });
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let refused: ReviewLimitError | undefined;
      let done = false;
      const finish = (error?: IntakeRefusal) => {
        if (done) return;
        done = true;
        clearTimeout(idle);
        clearTimeout(deadline);
        request.off('data', onData);
        request.off('end', onEnd);
        request.off('error', onError);
        request.off('aborted', onAborted);
        if (error) {
          // Paused, not drained: the server drops the connection once it has answered.
          request.pause();
          reject(error);
        } else if (refused) resolve({ bytes: Buffer.alloc(0), scanner, refused });
        else resolve({ bytes: Buffer.concat(chunks, size), scanner });
      };
      const timeout = (message: string) => () => finish(new IntakeRefusal(408, message));
      const idle = setTimeout(timeout(`no body bytes for ${this.idleMs} ms`), this.idleMs);
      const deadline = setTimeout(timeout(`the body was not complete after ${this.deadlineMs} ms`), this.deadlineMs);
      const onData = (chunk: Buffer) => {
        idle.refresh();
        size += chunk.length;
        if (size > this.maxBodyBytes) return finish(this.tooLarge());
        if (refused) return; // drained to the end, so the answer can be read, but not kept
        if (!take.bytes(chunk.length)) return finish(this.full());
        try {
          scanner.write(chunk);
          if (!take.values(scanner.stats.values)) return finish(this.full());
          chunks.push(chunk);
        } catch (error) {
          if (!(error instanceof ReviewLimitError)) throw error;
          refused = error;
          chunks.length = 0;
          take.values(0); // nothing of it is kept: its values no longer count against the others
        }
      };
      const onEnd = () => finish();
      const onError = () => finish(new IntakeRefusal(400, 'the request failed while its body was read'));
      const onAborted = () => finish(new IntakeRefusal(400, 'the client went away'));
      request.on('data', onData);
      request.on('end', onEnd);
      request.on('error', onError);
      request.on('aborted', onAborted);
    });
  }
}
