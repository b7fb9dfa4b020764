import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { ManualClock } from '@nestor/core';
import { recordSpans, type SpanRecorder } from '../../test-support/in-memory-tracing.js';
import { FakeKubeClient } from '../../fake/fake-kube-client.js';
import { LeaseLostError } from '../leases/leader-election.js';
import { WorkQueue } from '../queue/queue.js';
import { ReconcileLoop } from './reconcile-loop.js';
import type { Reconciler } from './reconciler.js';
import { TerminalError } from './result.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function loop(
  reconcile: Reconciler<unknown>,
  options: { timeoutMs?: number; maxRetries?: number; cluster?: string } = {},
) {
  return new ReconcileLoop<unknown>({
    name: 'widgets',
    kind: 'Widget',
    queue: new WorkQueue<string>({ clock: new ManualClock() }),
    reconcile,
    read: () => undefined,
    log: silent,
    client: new FakeKubeClient(),
    ...options,
  });
}

// This file's process registers the SDK only in the second part: until then the API is the
// no-op it is in an application that installs no SDK.
describe('reconcile spans without an OpenTelemetry SDK', () => {
  it('makes no span and no span context: the reconcile runs as if there were no tracing', async () => {
    let active: unknown = 'unset';
    await loop(() => void (active = trace.getActiveSpan())).process('ns/a');
    assert.equal(active, undefined);
  });
});

describe('reconcile spans with an OpenTelemetry SDK', () => {
  let recorder: SpanRecorder;
  before(() => (recorder = recordSpans()));
  after(() => recorder.stop());

  /** The span of the run of `key` (one per key in these tests). */
  const spanOf = (key: string) => {
    const [namespace, name] = key.split('/');
    const found = recorder
      .spans()
      .filter((s) => s.attributes['k8s.namespace.name'] === namespace && s.attributes['nestor.object.name'] === name);
    assert.equal(found.length, 1, `one span for ${key}`);
    return found[0]!;
  };

  it('names the span after the controller and gives it what a user filters on', async () => {
    let active: unknown;
    await loop(() => void (active = trace.getActiveSpan())).process('ns/done');
    const span = spanOf('ns/done');
    assert.equal(span.name, 'reconcile widgets');
    assert.equal(span.attributes['nestor.controller'], 'widgets');
    assert.equal(span.attributes['nestor.kind'], 'Widget');
    assert.equal(span.attributes['nestor.result'], 'success');
    assert.equal(span.attributes['nestor.requeue'], false);
    assert.equal(span.attributes['nestor.attempt'], 1);
    assert.equal(typeof span.attributes['nestor.reconcile_id'], 'string');
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.ok(span.ended);
    // The reconcile ran with its span active: what it calls is the span's child.
    assert.equal((active as { spanContext(): { spanId: string } }).spanContext().spanId, span.spanContext().spanId);
    assert.equal(span.attributes['k8s.cluster.name'], undefined, 'the manager’s own cluster is not named');
  });

  it('names the member cluster of a fleet’s run', async () => {
    await loop(() => undefined, { cluster: 'east' }).process('ns/member');
    assert.equal(spanOf('ns/member').attributes['k8s.cluster.name'], 'east');
  });

  it('says when the object is queued again: requeueAfter, requeue, an error retried', async () => {
    await loop(() => ({ requeueAfter: 30_000 })).process('ns/later');
    await loop(() => ({ requeue: true })).process('ns/again');
    await loop(() => {
      throw new Error('the backend refused');
    }).process('ns/failed');

    const later = spanOf('ns/later');
    assert.equal(later.attributes['nestor.result'], 'requeue_after');
    assert.equal(later.attributes['nestor.requeue'], true);
    assert.equal(later.attributes['nestor.requeue_after_ms'], 30_000);

    const again = spanOf('ns/again');
    assert.equal(again.attributes['nestor.result'], 'requeue');
    assert.equal(again.attributes['nestor.requeue'], true);

    const failed = spanOf('ns/failed');
    assert.equal(failed.attributes['nestor.result'], 'error');
    assert.equal(failed.attributes['nestor.requeue'], true);
    assert.equal(failed.attributes['error.type'], 'Error');
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    assert.equal(failed.status.message, 'the backend refused');
    assert.equal(failed.events[0]?.name, 'exception');
  });

  it('marks a terminal error, a run given up on and a timeout as errors that are not queued again', async () => {
    await loop(() => {
      throw new TerminalError('the spec names no backend');
    }).process('ns/terminal');
    await loop(
      () => {
        throw new Error('still refused');
      },
      { maxRetries: 1 },
    ).process('ns/exhausted');
    await loop(
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      {
        timeoutMs: 20,
      },
    ).process('ns/slow');

    const terminal = spanOf('ns/terminal');
    assert.equal(terminal.attributes['nestor.result'], 'terminal_error');
    assert.equal(terminal.attributes['nestor.requeue'], false);
    assert.equal(terminal.attributes['error.type'], 'TerminalError');
    assert.equal(terminal.status.code, SpanStatusCode.ERROR);

    const exhausted = spanOf('ns/exhausted');
    assert.equal(exhausted.attributes['nestor.result'], 'error');
    assert.equal(exhausted.attributes['nestor.requeue'], false);

    const slow = spanOf('ns/slow');
    assert.equal(slow.attributes['nestor.result'], 'timeout');
    assert.equal(slow.attributes['error.type'], 'ReconcileTimeoutError');
    assert.equal(slow.status.code, SpanStatusCode.ERROR);
  });

  it('marks a run the fence stopped as fenced, not as an error, and not queued again', async () => {
    await loop(() => {
      throw new LeaseLostError('this replica does not hold the lease');
    }).process('ns/fenced');
    const fenced = spanOf('ns/fenced');
    assert.equal(fenced.attributes['nestor.result'], 'fenced');
    assert.equal(fenced.attributes['nestor.requeue'], false);
    assert.equal(fenced.attributes['error.type'], undefined);
    assert.notEqual(fenced.status.code, SpanStatusCode.ERROR);
  });
});
