import type { IncomingHttpHeaders } from 'node:http';

// What a request through the Transport is asked with and answered with.

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** A Buffer or string goes as is; anything else as JSON. */
  body?: unknown;
  /** Content type of the body (default application/json). */
  contentType?: string;
  /** The Accept header (default application/json). */
  accept?: string;
  signal?: AbortSignal;
  /** Deadline for the whole exchange, body included (default: the transport's requestTimeoutMs). */
  timeoutMs?: number;
  /** Told the status of the answer once its head came (a client span records it). */
  onStatus?: (status: number) => void;
}

/** How a watch stream is asked for and decoded. */
export interface StreamOptions {
  /**
   * Ask for protobuf (a built-in kind; never a custom resource), JSON if the server prefers.
   * Ignored when the transport's `protobuf` option is off.
   */
  protobuf?: boolean;
  /** Protobuf: never decode metadata.managedFields (the informer drops them anyway). */
  dropManagedFields?: boolean;
  /** A JSON Accept value of its own (e.g. METADATA_WATCH_ACCEPT); it rules out protobuf. */
  accept?: string;
  /** Called once the server accepted the stream (a status below 400), before any value: a quiet watch is open. */
  onOpen?: () => void;
}

export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A response whose body is read as it arrives (requestStreamed). */
export interface StreamedTransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body's chunks; a broken connection throws a KubeApiError. Read it, or readBody(), once. */
  chunks: AsyncIterable<Buffer>;
  readBody(): Promise<Buffer>;
  /** Ends the exchange (frees the connection, or cuts what is left of the body). Always call it. */
  release(): void;
}
