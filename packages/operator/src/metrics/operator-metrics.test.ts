import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { TerminalError } from '../runtime/controller/result.js';
import type { WorkQueue } from '../runtime/queue/queue.js';
import { parseMetrics, valueOf, type Sample } from '../test-support/prometheus.js';
import { OperatorMetrics } from './operator-metrics.js';

const controller = 'widgets';
const queue = { name: controller, controller };

async function scrape(metrics: OperatorMetrics): Promise<Sample[]> {
  return parseMetrics(await metrics.scrape());
}

describe('OperatorMetrics', () => {
  it('creates every series of a controller and its queue at 0, as controller-runtime does', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    metrics.controllerSink(controller, 4);
    const samples = await scrape(metrics);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      assert.equal(valueOf(samples, 'controller_runtime_reconcile_total', { controller, result }), 0, result);
    }
    for (const name of [
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_terminal_reconcile_errors_total',
      'controller_runtime_reconcile_panics_total',
      'controller_runtime_reconcile_timeouts_total',
      'controller_runtime_reconcile_time_seconds_count',
      'controller_runtime_active_workers',
    ]) {
      assert.equal(valueOf(samples, name, { controller }), 0, name);
    }
    assert.equal(valueOf(samples, 'controller_runtime_max_concurrent_reconciles', { controller }), 4);
    for (const name of [
      'workqueue_depth',
      'workqueue_adds_total',
      'nestor_workqueue_low_priority_adds_total',
      'workqueue_retries_total',
      'workqueue_queue_duration_seconds_count',
      'workqueue_work_duration_seconds_count',
    ]) {
      assert.equal(valueOf(samples, name, queue), 0, name);
    }
  });

  it('counts reconciles by result, errors, terminal errors, panics and timeouts', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const sink = metrics.controllerSink(controller, 1);
    sink.reconciled('success', 0.25);
    sink.reconciled('requeue_after', 0.5);
    sink.reconciled('requeue', 0.5);
    sink.reconciled('error', 1, new Error('boom'));
    sink.reconciled('error', 1, new TypeError("Cannot read properties of undefined (reading 'spec')"));
    sink.reconciled('terminal_error', 1, new TerminalError('invalid spec'));
    sink.reconciled('timeout', 2, new Error('timed out'));
    const samples = await scrape(metrics);
    const total = (result: string) => valueOf(samples, 'controller_runtime_reconcile_total', { controller, result });
    assert.equal(total('success'), 1);
    assert.equal(total('requeue_after'), 1);
    assert.equal(total('requeue'), 1);
    // As controller-runtime: terminal errors and timeouts are errors too.
    assert.equal(total('error'), 4);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_errors_total', { controller }), 4);
    assert.equal(valueOf(samples, 'controller_runtime_terminal_reconcile_errors_total', { controller }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_panics_total', { controller }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_timeouts_total', { controller }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_time_seconds_count', { controller }), 7);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_time_seconds_sum', { controller }), 6.25);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_time_seconds_bucket', { controller, le: '0.25' }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_time_seconds_bucket', { controller, le: '60' }), 7);
  });

  it('reports active workers and the queue under client-go names', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const sink = metrics.controllerSink(controller, 2);
    sink.activeWorkers(1);
    sink.activeWorkers(1);
    sink.activeWorkers(-1);
    sink.queue!.add();
    sink.queue!.add();
    sink.queue!.lowPriorityAdd!();
    sink.queue!.depth(2);
    sink.queue!.queueLatency(0.001);
    sink.queue!.workDuration(0.5);
    sink.queue!.retry();
    metrics.trackQueue(controller, {
      unfinishedWorkSeconds: () => 1.5,
      longestRunningProcessorSeconds: () => 0.75,
    } as unknown as WorkQueue<string>);
    const samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'controller_runtime_active_workers', { controller }), 1);
    assert.equal(valueOf(samples, 'workqueue_adds_total', queue), 2);
    assert.equal(valueOf(samples, 'nestor_workqueue_low_priority_adds_total', queue), 1);
    assert.equal(valueOf(samples, 'workqueue_depth', queue), 2);
    assert.equal(valueOf(samples, 'workqueue_retries_total', queue), 1);
    assert.equal(valueOf(samples, 'workqueue_queue_duration_seconds_count', queue), 1);
    assert.equal(valueOf(samples, 'workqueue_queue_duration_seconds_bucket', { ...queue, le: '0.001' }), 1);
    assert.equal(valueOf(samples, 'workqueue_work_duration_seconds_sum', queue), 0.5);
    assert.equal(valueOf(samples, 'workqueue_unfinished_work_seconds', queue), 1.5);
    assert.equal(valueOf(samples, 'workqueue_longest_running_processor_seconds', queue), 0.75);
  });

  it('reports leadership and watch health', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    metrics.setLeader('my-operator', false);
    let samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'leader_election_master_status', { name: 'my-operator' }), 0);
    metrics.setLeader('my-operator', true);
    const now = Date.now();
    metrics.trackWatches(() => [
      {
        resource: 'configmaps',
        stats: { restarts: 2, relists: 1, lastEventAt: now - 30_000, lastSyncAt: now - 60_000 },
      },
      // Listed, no event since: its age runs from the list.
      { resource: 'widgets.example.com', stats: { restarts: 0, relists: 0, lastSyncAt: now - 10_000 } },
      { resource: 'secrets', stats: { restarts: 0, relists: 0 } },
    ]);
    samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'leader_election_master_status', { name: 'my-operator' }), 1);
    assert.equal(valueOf(samples, 'nestor_watch_restarts', { resource: 'configmaps' }), 2);
    assert.equal(valueOf(samples, 'nestor_watch_relists', { resource: 'configmaps' }), 1);
    const age = (resource: string) => valueOf(samples, 'nestor_watch_last_event_age_seconds', { resource });
    assert.ok(age('configmaps')! >= 30 && age('configmaps')! < 60, `age ${age('configmaps')}`);
    assert.ok(age('widgets.example.com')! >= 10 && age('widgets.example.com')! < 60);
    assert.equal(age('secrets'), undefined, 'nothing received yet: no age');
  });

  it('reports the resources the API server throttles, read when scraped', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    let throttled: string[] = ['configmaps', 'apps/deployments'];
    metrics.trackThrottling(() => throttled);
    let samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_apiserver_throttled', { resource: 'configmaps' }), 1);
    assert.equal(valueOf(samples, 'nestor_apiserver_throttled', { resource: 'apps/deployments' }), 1);
    throttled = ['apps/deployments'];
    samples = await scrape(metrics);
    assert.equal(
      valueOf(samples, 'nestor_apiserver_throttled', { resource: 'configmaps' }),
      undefined,
      'gone once lifted',
    );
    assert.equal(valueOf(samples, 'nestor_apiserver_throttled', { resource: 'apps/deployments' }), 1);
  });

  it('reports a shard: the objects it caches, its hand-overs, and the assigner’s moves and passes', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const sink = metrics.shardingSink('pools', 'pools-0');
    let samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_shard_moves_total', { ring: 'pools', type: 'drain' }), 0);
    assert.equal(valueOf(samples, 'nestor_shard_handovers_total', { ring: 'pools', shard: 'pools-0' }), 0);
    let cached = 120;
    sink.objects(() => cached);
    sink.moved('assign');
    sink.moved('assign');
    sink.moved('drain');
    sink.handedOver(0.2);
    sink.rebalanced(0.3);
    cached = 80;
    samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_shard_objects', { ring: 'pools', shard: 'pools-0' }), 80);
    assert.equal(valueOf(samples, 'nestor_shard_moves_total', { ring: 'pools', type: 'assign' }), 2);
    assert.equal(valueOf(samples, 'nestor_shard_moves_total', { ring: 'pools', type: 'drain' }), 1);
    assert.equal(valueOf(samples, 'nestor_shard_handovers_total', { ring: 'pools', shard: 'pools-0' }), 1);
    assert.equal(valueOf(samples, 'nestor_shard_rebalance_duration_seconds_count', { ring: 'pools' }), 1);
    assert.equal(valueOf(samples, 'nestor_shard_drain_duration_seconds_sum', { ring: 'pools', shard: 'pools-0' }), 0.2);
  });

  it('counts objects given up on, and Events written and dropped', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const sink = metrics.controllerSink(controller, 1);
    const events = metrics.eventSink();
    let samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_reconcile_retries_exhausted_total', { controller }), 0);
    assert.equal(valueOf(samples, 'nestor_events_dropped_total', { reason: 'queue-full' }), 0);
    sink.retriesExhausted!();
    events.written('create');
    events.written('patch');
    events.dropped('failed');
    events.dropped('failed');
    samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_reconcile_retries_exhausted_total', { controller }), 1);
    assert.equal(valueOf(samples, 'nestor_events_written_total', { verb: 'create' }), 1);
    assert.equal(valueOf(samples, 'nestor_events_written_total', { verb: 'patch' }), 1);
    assert.equal(valueOf(samples, 'nestor_events_dropped_total', { reason: 'failed' }), 2);
  });

  it('counts reconciles stopped by the write fence apart from results and errors', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const sink = metrics.controllerSink(controller, 1);
    let samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_reconcile_fenced_total', { controller }), 0);
    sink.fenced!(0.01);
    samples = await scrape(metrics);
    assert.equal(valueOf(samples, 'nestor_reconcile_fenced_total', { controller }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_errors_total', { controller }), 0);
    assert.equal(valueOf(samples, 'controller_runtime_reconcile_total', { controller, result: 'error' }), 0);
  });

  it('counts a storage-version migration’s objects by result from its progress, and its runs by outcome', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const crd = 'widgets.example.com';
    assert.ok(
      !(await scrape(metrics)).some((s) => s.name.startsWith('nestor_storage_version')),
      'none before first use',
    );
    const sink = metrics.migrationSink();
    sink.started(crd);
    const progress = {
      crd,
      storage: 'v1',
      from: ['v1beta1'],
      rewritten: 400,
      current: 90,
      gone: 10,
      failed: 0,
      seconds: 5,
    };
    sink.progress({ ...progress, remaining: 500 });
    let samples = await scrape(metrics);
    const objects = (result: string) =>
      valueOf(samples, 'nestor_storage_version_migration_objects_total', { crd, result });
    assert.deepEqual([objects('rewritten'), objects('current'), objects('gone'), objects('failed')], [400, 90, 10, 0]);
    assert.equal(valueOf(samples, 'nestor_storage_version_migration_remaining_objects', { crd }), 500);
    assert.equal(valueOf(samples, 'nestor_storage_version_migration_running', { crd }), 1);
    sink.progress({ ...progress, rewritten: 880, current: 100, gone: 20 });
    sink.finished(crd, 'migrated');
    samples = await scrape(metrics);
    assert.deepEqual(
      [objects('rewritten'), objects('current'), objects('gone')],
      [880, 100, 20],
      'the increments, not the totals again',
    );
    assert.equal(valueOf(samples, 'nestor_storage_version_migration_remaining_objects', { crd }), 0);
    assert.equal(valueOf(samples, 'nestor_storage_version_migration_running', { crd }), 0);
    assert.equal(valueOf(samples, 'nestor_storage_version_migrations_total', { crd, outcome: 'migrated' }), 1);
    assert.equal(metrics.migrationSink(), sink, 'one sink');
  });

  it('adds the process metrics to the registry it is given, and serves the text format', async () => {
    const registry = new Registry();
    const metrics = new OperatorMetrics({ registry });
    assert.equal(metrics.registry, registry);
    assert.match(metrics.contentType, /^text\/plain/);
    const samples = await scrape(metrics);
    assert.ok(samples.some((s) => s.name === 'process_cpu_user_seconds_total'));
    assert.ok(samples.some((s) => s.name === 'nodejs_heap_size_total_bytes'));
  });
});

describe('OperatorMetrics for a fleet', () => {
  it('reports each member cluster’s phase, held reconciles and attempts when scraped', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    metrics.trackFleet(() => [
      { name: 'east', phase: 'engaged', attempts: 1, since: 0, held: true },
      { name: 'west', phase: 'failed', attempts: 4, since: 0, held: false, error: 'connection refused' },
    ]);
    const text = await metrics.scrape();
    assert.match(text, /nestor_fleet_member_cluster\{cluster="east",phase="engaged"\} 1/);
    assert.match(text, /nestor_fleet_member_cluster\{cluster="west",phase="engaged"\} 0/);
    assert.match(text, /nestor_fleet_member_cluster\{cluster="west",phase="failed"\} 1/);
    assert.match(text, /nestor_fleet_member_held\{cluster="east"\} 1/);
    assert.match(text, /nestor_fleet_member_engage_attempts\{cluster="west"\} 4/);
  });
});
