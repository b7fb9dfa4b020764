import type { FailedRequest } from './errors.js';
import { KubeApiError } from './errors.js';
import type { Answered } from './exchange-guard.js';
import { JsonLineDecoder } from './json-lines.js';
import { errorBody, isProtobuf } from './protobuf/envelope.js';
import type { ProtobufSchema } from './protobuf/schema.js';
import { ProtobufWatchDecoder } from './protobuf/watch-frames.js';
import { ProtobufDecodeError } from './protobuf/wire-reader.js';

/**
 * A streamed response's values (JSON lines, or with `schema` protobuf frames when the server
 * answers in protobuf), whichever protocol carries it, decoded off the socket as they come.
 * `fail` makes a broken connection the request's error (and tells connectivity).
 */
export async function* decodeWatch<T>(
  answered: Answered,
  failed: FailedRequest,
  signal: AbortSignal | undefined,
  schema: ProtobufSchema | undefined,
  fail: (error: unknown) => unknown,
  onOpen?: () => void,
): AsyncGenerator<T, void> {
  const { head, exchange, guard } = answered;
  let decoder: { write(chunk: Buffer): unknown[]; end(): unknown } = new JsonLineDecoder<T>();
  try {
    const { status, headers } = head;
    const contentType = headers['content-type'];
    if (status >= 400) {
      const body = await exchange.readBody();
      throw KubeApiError.fromResponse(failed, status, errorBody(body, contentType, schema), headers['retry-after']);
    }
    if (schema && isProtobuf(contentType)) decoder = new ProtobufWatchDecoder(schema);
    onOpen?.();
    for await (const chunk of exchange.body) {
      for (const value of decoder.write(chunk)) {
        if (signal?.aborted) throw signal.reason;
        yield value as T;
      }
    }
  } catch (error) {
    throw error instanceof KubeApiError || error instanceof SyntaxError || error instanceof ProtobufDecodeError
      ? error
      : fail(error);
  } finally {
    guard.clear();
    exchange.release();
  }
  // Aborted as the response completed: nothing was cut, but the caller asked to stop.
  if (signal?.aborted) throw signal.reason;
  const last = decoder.end();
  if (last !== undefined) yield last as T;
}
