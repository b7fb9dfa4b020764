import { servedResources, type RequestOptions, type Transport } from '@nestor/core';
import { hostname } from 'node:os';
import type { EventSeries } from './event-series.js';

// Where the recorder's Events go: events.k8s.io/v1 (eventTime, series, reportingController)
// where the API server serves it, core/v1 (count, first/lastTimestamp) where it does not.
// A create names the Event (regarding name and a time, as client-go) so each is one write;
// repeats are merge patches of the series or the count.

export type EventsApi = 'events.k8s.io/v1' | 'v1';

export interface EventSinkOptions {
  /** Which API to write (default 'auto': events.k8s.io/v1 when served, else core/v1). */
  api?: EventsApi | 'auto';
  reportingInstance: string;
  /** Bound on each write (default 10 s): a write that hangs must not hold a writer for long. */
  requestTimeoutMs?: number;
}

const MERGE_PATCH = 'application/merge-patch+json';

export class EventSink {
  private api: Promise<EventsApi> | undefined;
  private sequence = 0;
  private readonly host = hostname();

  constructor(
    private readonly transport: Pick<Transport, 'json'>,
    private readonly options: EventSinkOptions,
  ) {
    if (options.api && options.api !== 'auto') this.api = Promise.resolve(options.api);
  }

  /** Creates the series' Event, or patches its count: whichever the API server lacks. */
  async write(series: EventSeries, signal: AbortSignal): Promise<void> {
    if (series.name && series.api) {
      await this.patch(series, series.api, signal);
      return;
    }
    const api = await this.whichApi(signal);
    const name = eventName(series.regarding.name ?? 'event', series.firstTime, this.sequence++);
    await this.request(
      'POST',
      `${base(api)}/namespaces/${series.namespace}/events`,
      this.created(series, api, name),
      signal,
    );
    series.name = name;
    series.api = api;
  }

  private patch(series: EventSeries, api: EventsApi, signal: AbortSignal): Promise<unknown> {
    const body =
      api === 'v1'
        ? { count: series.count, lastTimestamp: metaTime(series.lastTime) }
        : { series: { count: series.count, lastObservedTime: microTime(series.lastTime) } };
    const path = `${base(api)}/namespaces/${series.namespace}/events/${series.name}`;
    return this.request('PATCH', path, body, signal, MERGE_PATCH);
  }

  private created(series: EventSeries, api: EventsApi, name: string): object {
    const metadata = { name, namespace: series.namespace };
    const { reportingInstance } = this.options;
    if (api === 'events.k8s.io/v1') {
      return {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata,
        eventTime: microTime(series.firstTime),
        ...(series.count > 1 ? { series: { count: series.count, lastObservedTime: microTime(series.lastTime) } } : {}),
        reportingController: series.reportingController,
        reportingInstance,
        action: series.action,
        reason: series.reason,
        regarding: series.regarding,
        ...(series.related ? { related: series.related } : {}),
        note: series.note,
        type: series.type,
      };
    }
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata,
      involvedObject: series.regarding,
      ...(series.related ? { related: series.related } : {}),
      type: series.type,
      reason: series.reason,
      action: series.action,
      message: series.note,
      source: { component: series.reportingController, host: this.host },
      reportingComponent: series.reportingController,
      reportingInstance,
      firstTimestamp: metaTime(series.firstTime),
      lastTimestamp: metaTime(series.lastTime),
      count: series.count,
    };
  }

  /** events.k8s.io/v1 when the API server serves it (asked once; asked again after a failed discovery). */
  private whichApi(signal: AbortSignal): Promise<EventsApi> {
    this.api ??= servedResources(this.transport, 'events.k8s.io/v1', signal).then(
      (served) => (served?.has('events') ? 'events.k8s.io/v1' : 'v1'),
      (error: unknown) => {
        this.api = undefined;
        throw error;
      },
    );
    return this.api;
  }

  private request(method: string, path: string, body: unknown, signal: AbortSignal, contentType?: string) {
    const options: RequestOptions = {
      body,
      signal,
      timeoutMs: this.options.requestTimeoutMs ?? 10_000,
      ...(contentType ? { contentType } : {}),
    };
    return this.transport.json(method, path, options);
  }
}

function base(api: EventsApi): string {
  return api === 'v1' ? '/api/v1' : '/apis/events.k8s.io/v1';
}

/**
 * `<regarding name>.<hex time>`, as client-go names Events: unique per write, a DNS
 * subdomain even when the regarding object's name is not one.
 */
export function eventName(regardingName: string, timeMs: number, sequence: number): string {
  const suffix = (BigInt(Math.floor(timeMs)) * 1_000_000n + BigInt(sequence % 1_000_000)).toString(16);
  const prefix = regardingName
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 253 - 1 - suffix.length)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return prefix ? `${prefix}.${suffix}` : suffix;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** metav1.Time: RFC 3339 to the second. */
function metaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
