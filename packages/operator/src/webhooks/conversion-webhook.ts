// A conversion webhook without Nest: ConversionReviews in, answers out, for every kind with a
// HubSpokeConverter. The API server sends all of a CRD's conversions to one path (`/convert`),
// waits 30 s at most, and fails the whole read or write on any failure.
import {
  conversionReviewResponse,
  parseConversionReview,
  type ConversionRequest,
  type ConversionResponse,
  type ConversionReviewResponse,
  type ConvertibleObject,
} from './conversion-review.js';
import { turn } from './event-loop-turn.js';
import { ConversionError, type HubSpokeConverter } from './hub-spoke-converter.js';
import { CONVERSION_PATH } from './webhook-configuration.js';

export { CONVERSION_PATH };

/** The API server gives a conversion webhook 30 s (no setting); answer before it gives up. */
export const DEFAULT_CONVERSION_TIMEOUT_MS = 25_000;

/**
 * How long to convert, from the `timeout` the API server appends to the URL (`?timeout=30s`):
 * 2 s less, to leave time for the answer; the default when there is none.
 */
export function conversionTimeoutMs(query: URLSearchParams): number {
  const match = /^(\d+)s$/.exec(query.get('timeout') ?? '');
  return match ? Math.max(1_000, Number(match[1]) * 1_000 - 2_000) : DEFAULT_CONVERSION_TIMEOUT_MS;
}

export interface ConversionWebhookOptions {
  /** Answer Failure after this long (default 25 s), with a message saying so, rather than let the API server time out. */
  timeoutMs?: number;
  /** A converter that threw (not a conversion it cannot do): for the caller's log. */
  onFailure?: (error: unknown, object: ConvertibleObject, request: ConversionRequest) => void;
  /**
   * Conversion data on the object not kept or not restored (an annotation too large, not
   * JSON, or too tangled to sort out): the conversion succeeds without it. For the caller's
   * log and an Event on the object; `reason` says what and why.
   */
  onDataIgnored?: (object: ConvertibleObject, reason: string, request: ConversionRequest) => void;
}

export class ConversionWebhook {
  private readonly converters = new Map<string, HubSpokeConverter>();

  constructor(
    converters: readonly HubSpokeConverter[],
    private readonly options: ConversionWebhookOptions = {},
  ) {
    for (const converter of converters) {
      const key = `${converter.kind}.${converter.group}`;
      if (this.converters.has(key)) throw new Error(`two converters for ${key}: one hub per kind`);
      this.converters.set(key, converter);
    }
  }

  /**
   * The whole exchange: a ConversionReview body (JSON text or parsed) in, the review to send
   * back with HTTP 200 out. Throws MalformedReviewError (answer 400 with its message) when
   * the body is not a ConversionReview; a conversion that fails is a `Failure` result.
   */
  async review(body: string | unknown, options: { timeoutMs?: number } = {}): Promise<ConversionReviewResponse> {
    const review = parseConversionReview(body);
    return conversionReviewResponse(review, await this.convert(review.request, options));
  }

  /**
   * Converts every object of the request, in order; the first failure fails them all. The
   * event loop turns between objects and between a converter's steps, so the deadline fires
   * and other requests are served meanwhile; past the deadline the work stops.
   */
  async convert(request: ConversionRequest, options: { timeoutMs?: number } = {}): Promise<ConversionResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_CONVERSION_TIMEOUT_MS;
    const deadline = new AbortController();
    const convertedObjects: ConvertibleObject[] = [];
    let timer: NodeJS.Timeout | undefined;
    // The race answers even when a converter's promise never settles; the abort stops the rest.
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new ConversionTimeout(timeoutMs, request.objects.length);
        deadline.abort(error);
        reject(error);
      }, timeoutMs);
    });
    const converting = (async () => {
      for (const object of request.objects) {
        await turn(deadline.signal);
        convertedObjects.push(await this.convertOne(object, request, deadline.signal));
      }
    })();
    try {
      await Promise.race([converting, timedOut]);
      return { uid: request.uid, convertedObjects, result: { status: 'Success' } };
    } catch (error) {
      deadline.abort(error); // a failed or timed-out run stops at its next step
      converting.catch(() => {});
      return {
        uid: request.uid,
        convertedObjects: [],
        result: { status: 'Failure', message: (error as Error).message },
      };
    } finally {
      clearTimeout(timer);
      timedOut.catch(() => {});
    }
  }

  private async convertOne(
    object: ConvertibleObject,
    request: ConversionRequest,
    signal: AbortSignal,
  ): Promise<ConvertibleObject> {
    const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
    const converter = this.converters.get(`${object.kind}.${group}`);
    const name = `${object.kind} ${objectName(object)}`;
    if (!converter) {
      const known = [...this.converters.keys()].join(', ') || 'none';
      throw new ConversionError(
        `converting ${name}: no converter for ${object.apiVersion} ${object.kind} (known: ${known})`,
      );
    }
    try {
      const onDataIgnored = this.options.onDataIgnored;
      return await converter.convert(object, request.desiredAPIVersion, {
        signal,
        ...(onDataIgnored ? { onDataIgnored: (reason: string) => onDataIgnored(object, reason, request) } : {}),
      });
    } catch (error) {
      if (error instanceof ConversionError && error.cause !== undefined) {
        this.options.onFailure?.(error.cause, object, request);
      } else if (!(error instanceof ConversionError)) {
        this.options.onFailure?.(error, object, request);
      }
      const message = (error as Error)?.message ?? String(error);
      throw new ConversionError(
        `converting ${name} from ${object.apiVersion} to ${request.desiredAPIVersion}: ${message}`,
        { cause: error },
      );
    }
  }
}

/**
 * `<namespace>/<name>` of an object from the request, or as much of it as it has: only
 * strings are shown (a name that is an object with its own `toString` must not throw here).
 */
export function objectName(object: ConvertibleObject): string {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const namespace = text(object.metadata?.namespace);
  return `${namespace ? `${namespace}/` : ''}${text(object.metadata?.name)}`;
}

class ConversionTimeout extends ConversionError {
  constructor(timeoutMs: number, count: number) {
    super(
      `converting ${count} object(s) took longer than ${timeoutMs} ms; the API server waits 30 s at most: make the converters faster (they must not call out)`,
    );
  }
}
