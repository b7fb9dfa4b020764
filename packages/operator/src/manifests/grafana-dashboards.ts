// Grafana dashboards of the runtime's metrics, as kubebuilder's grafana plugin writes them
// for controller-runtime's: what `nestor manifests --grafana <dir>` writes. Each dashboard
// picks its Prometheus with a datasource variable (not an import-time input), so the same
// JSON works imported by hand and provisioned by Grafana's sidecar from a ConfigMap.
import { operatorLabels, type Manifest } from './manifest.js';

/** The classic dashboard JSON model (Grafana's schemaVersion 39 and later read it). */
export interface GrafanaDashboard {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  schemaVersion: number;
  editable: boolean;
  graphTooltip: number;
  time: { from: string; to: string };
  refresh: string;
  templating: { list: GrafanaVariable[] };
  annotations: { list: [] };
  panels: Array<GrafanaPanel | GrafanaRow>;
}

export interface GrafanaVariable {
  name: string;
  label: string;
  type: 'datasource' | 'query';
  query: string | { query: string; refId: string };
  datasource?: GrafanaDatasource;
  definition?: string;
  includeAll?: boolean;
  multi?: boolean;
  allValue?: string;
  refresh?: 1 | 2;
  hide?: 0;
  current?: { text: string; value: string };
  options?: [];
  regex?: string;
  sort?: 1;
}

export interface GrafanaDatasource {
  type: 'prometheus';
  uid: string;
}

// A type, not an interface: Grafana's schema types a target as Record<string, unknown>.
export type GrafanaTarget = {
  refId: string;
  expr: string;
  legendFormat: string;
  datasource: GrafanaDatasource;
};

export interface GrafanaPanel {
  id: number;
  type: 'timeseries' | 'stat';
  title: string;
  description: string;
  datasource: GrafanaDatasource;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: GrafanaTarget[];
  fieldConfig: {
    defaults: {
      unit: string;
      min?: number;
      mappings?: Array<{ type: 'value'; options: Record<string, { text: string; color: string }> }>;
    };
    overrides: [];
  };
  options: Record<string, unknown>;
}

export interface GrafanaRow {
  id: number;
  type: 'row';
  title: string;
  collapsed: boolean;
  gridPos: { x: number; y: number; w: number; h: number };
  panels: [];
}

/** The schema version the JSON is written in (Grafana 11.0). */
export const GRAFANA_SCHEMA_VERSION = 39;

const DATASOURCE: GrafanaDatasource = { type: 'prometheus', uid: '${datasource}' };

/** The series of the operator chosen in the variables; `controller` also filters by controller. */
const SELECTOR = 'namespace=~"$namespace", job=~"$job"';
const CONTROLLER = `${SELECTOR}, controller=~"$controller"`;
const QUEUE = `${SELECTOR}, name=~"$controller"`;
const RATE = '[$__rate_interval]';

interface PanelSpec {
  title: string;
  description: string;
  unit: string;
  queries: Array<[expr: string, legend: string]>;
  /** Width in Grafana's 24 columns (default 12). */
  width?: number;
  stat?: { mappings?: Record<string, { text: string; color: string }> };
}

/** Rows of panels laid out left to right, a new line when the 24 columns are full. */
function layout(rows: Array<[title: string, panels: PanelSpec[]]>): Array<GrafanaPanel | GrafanaRow> {
  const out: Array<GrafanaPanel | GrafanaRow> = [];
  let id = 1;
  let y = 0;
  for (const [title, panels] of rows) {
    out.push({ id: id++, type: 'row', title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
    y += 1;
    let x = 0;
    for (const spec of panels) {
      const w = spec.width ?? 12;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      out.push(panel(id++, spec, { x, y, w, h: 8 }));
      x += w;
    }
    y += 8;
  }
  return out;
}

function panel(id: number, spec: PanelSpec, gridPos: GrafanaPanel['gridPos']): GrafanaPanel {
  const targets = spec.queries.map(([expr, legendFormat], i) => ({
    refId: String.fromCharCode(65 + i),
    expr,
    legendFormat,
    datasource: DATASOURCE,
  }));
  const mappings = spec.stat?.mappings;
  return {
    id,
    type: spec.stat ? 'stat' : 'timeseries',
    title: spec.title,
    description: spec.description,
    datasource: DATASOURCE,
    gridPos,
    targets,
    fieldConfig: {
      defaults: {
        unit: spec.unit,
        ...(spec.unit !== 'none' && !spec.stat ? { min: 0 } : {}),
        ...(mappings ? { mappings: [{ type: 'value' as const, options: mappings }] } : {}),
      },
      overrides: [],
    },
    options: spec.stat
      ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'background' }
      : {
          legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['max', 'mean'] },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
  };
}

/** p50, p90 and p99 of a histogram, per the `by` labels. */
function quantiles(metric: string, selector: string, by: string, legend: string): Array<[string, string]> {
  return [0.5, 0.9, 0.99].map((q) => [
    `histogram_quantile(${q}, sum by (${by}, le) (rate(${metric}_bucket{${selector}}${RATE})))`,
    `p${Math.round(q * 100)} ${legend}`,
  ]);
}

function variables(): GrafanaVariable[] {
  const query = (name: string, label: string, expr: string, multi: boolean): GrafanaVariable => ({
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    definition: expr,
    query: { query: expr, refId: `${name}-variable` },
    refresh: 2,
    includeAll: multi,
    multi,
    ...(multi ? { allValue: '.*' } : {}),
    options: [],
    regex: '',
    sort: 1,
    hide: 0,
  });
  return [
    {
      name: 'datasource',
      label: 'Prometheus',
      type: 'datasource',
      query: 'prometheus',
      hide: 0,
      options: [],
      regex: '',
    },
    query('namespace', 'Namespace', 'label_values(controller_runtime_reconcile_total, namespace)', false),
    query('job', 'Job', 'label_values(controller_runtime_reconcile_total{namespace=~"$namespace"}, job)', false),
    query(
      'controller',
      'Controller',
      'label_values(controller_runtime_reconcile_total{namespace=~"$namespace", job=~"$job"}, controller)',
      true,
    ),
  ];
}

function dashboard(
  uid: string,
  title: string,
  description: string,
  panels: GrafanaDashboard['panels'],
): GrafanaDashboard {
  return {
    uid,
    title,
    description,
    tags: ['nestor', 'kubernetes', 'operator'],
    schemaVersion: GRAFANA_SCHEMA_VERSION,
    editable: true,
    graphTooltip: 1,
    time: { from: 'now-1h', to: 'now' },
    refresh: '30s',
    templating: { list: variables() },
    annotations: { list: [] },
    panels,
  };
}

/** The controllers' dashboard: reconciles, errors, latency, workers, work queues. */
function controllersDashboard(name: string): GrafanaDashboard {
  return dashboard(
    uidOf(name, 'controllers'),
    `${name}: controllers`,
    `Reconciles, errors, latency, workers and work queues of the ${name} operator's controllers (nestor manifests --grafana).`,
    layout([
      [
        'Reconciles',
        [
          {
            title: 'Reconciles per second, by result',
            description: 'controller_runtime_reconcile_total: success, requeue, requeue_after, error.',
            unit: 'ops',
            queries: [
              [
                `sum by (controller, result) (rate(controller_runtime_reconcile_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} {{result}}',
              ],
            ],
          },
          {
            title: 'Errors per second',
            description:
              'Reconciles that failed; of them terminal errors (not retried), timeouts and panics (TypeError, ReferenceError, RangeError, SyntaxError).',
            unit: 'ops',
            queries: [
              [
                `sum by (controller) (rate(controller_runtime_reconcile_errors_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} errors',
              ],
              [
                `sum by (controller) (rate(controller_runtime_terminal_reconcile_errors_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} terminal',
              ],
              [
                `sum by (controller) (rate(controller_runtime_reconcile_timeouts_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} timeouts',
              ],
              [
                `sum by (controller) (rate(controller_runtime_reconcile_panics_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} panics',
              ],
            ],
          },
          {
            title: 'Reconcile latency (p50, p90, p99)',
            description: 'controller_runtime_reconcile_time_seconds: how long one reconcile takes.',
            unit: 's',
            queries: quantiles('controller_runtime_reconcile_time_seconds', CONTROLLER, 'controller', '{{controller}}'),
          },
          {
            title: 'Objects given up on',
            description:
              'nestor_reconcile_retries_exhausted_total: objects that failed maxRetries times in a row, not retried until they change.',
            unit: 'short',
            queries: [
              [
                `sum by (controller) (increase(nestor_reconcile_retries_exhausted_total{${CONTROLLER}}[$__range]))`,
                '{{controller}}',
              ],
            ],
          },
        ],
      ],
      [
        'Workers',
        [
          {
            title: 'Workers busy',
            description: 'controller_runtime_active_workers against controller_runtime_max_concurrent_reconciles.',
            unit: 'short',
            queries: [
              [`sum by (controller) (controller_runtime_active_workers{${CONTROLLER}})`, '{{controller}} busy'],
              [
                `sum by (controller) (controller_runtime_max_concurrent_reconciles{${CONTROLLER}})`,
                '{{controller}} max',
              ],
            ],
          },
          {
            title: 'Workers busy, share of the maximum',
            description: 'Near 100% for long: the controller is at its maxConcurrentReconciles and its queue waits.',
            unit: 'percentunit',
            queries: [
              [
                `sum by (controller) (controller_runtime_active_workers{${CONTROLLER}}) / sum by (controller) (controller_runtime_max_concurrent_reconciles{${CONTROLLER}})`,
                '{{controller}}',
              ],
            ],
          },
        ],
      ],
      [
        'Work queues',
        [
          {
            title: 'Queue depth',
            description: 'workqueue_depth: keys waiting for a worker.',
            unit: 'short',
            queries: [[`sum by (name) (workqueue_depth{${QUEUE}})`, '{{name}}']],
          },
          {
            title: 'Queue wait (p50, p90, p99)',
            description:
              'workqueue_queue_duration_seconds: how long a key waits in the queue before a worker takes it.',
            unit: 's',
            queries: quantiles('workqueue_queue_duration_seconds', QUEUE, 'name', '{{name}}'),
          },
          {
            title: 'Adds and retries per second',
            description: 'workqueue_adds_total and workqueue_retries_total (rate-limited requeues).',
            unit: 'ops',
            queries: [
              [`sum by (name) (rate(workqueue_adds_total{${QUEUE}}${RATE}))`, '{{name}} adds'],
              [`sum by (name) (rate(workqueue_retries_total{${QUEUE}}${RATE}))`, '{{name}} retries'],
            ],
          },
          {
            title: 'Work in progress',
            description:
              'workqueue_longest_running_processor_seconds and workqueue_unfinished_work_seconds: growing values mean stuck reconciles.',
            unit: 's',
            queries: [
              [`max by (name) (workqueue_longest_running_processor_seconds{${QUEUE}})`, '{{name}} longest running'],
              [`sum by (name) (workqueue_unfinished_work_seconds{${QUEUE}})`, '{{name}} unfinished'],
            ],
          },
          {
            title: 'Work duration (p50, p90, p99)',
            description: 'workqueue_work_duration_seconds: from a worker taking a key to done.',
            unit: 's',
            queries: quantiles('workqueue_work_duration_seconds', QUEUE, 'name', '{{name}}'),
          },
          {
            title: 'Stream faults per second',
            description:
              'nestor_controller_stream_faults_total: events skipped (a predicate or mapper threw, an invalid request) and sources subscribed again.',
            unit: 'ops',
            queries: [
              [
                `sum by (controller, stream, fault) (rate(nestor_controller_stream_faults_total{${CONTROLLER}}${RATE}))`,
                '{{controller}} {{stream}} {{fault}}',
              ],
            ],
          },
        ],
      ],
    ]),
  );
}

/** The runtime's dashboard: API server outages, watches, leadership and shards, webhooks, Events, the process. */
function runtimeDashboard(name: string): GrafanaDashboard {
  return dashboard(
    uidOf(name, 'runtime'),
    `${name}: runtime`,
    `The ${name} operator's runtime: API server outages, watches, leadership and shards, webhooks, Events and the process (nestor manifests --grafana).`,
    layout([
      [
        'API server',
        [
          {
            title: 'Outage gate',
            description:
              'nestor_apiserver_unreachable: 1 while the API server gives no response and reconciles are held, per replica.',
            unit: 'none',
            width: 6,
            stat: {
              mappings: {
                '0': { text: 'answering', color: 'green' },
                '1': { text: 'unreachable: reconciles held', color: 'red' },
              },
            },
            queries: [[`max by (pod) (nestor_apiserver_unreachable{${SELECTOR}})`, '{{pod}}']],
          },
          {
            title: 'Outages',
            description: 'nestor_apiserver_outages_total: times the API server stopped answering, in the range shown.',
            unit: 'short',
            width: 6,
            stat: {},
            queries: [[`sum(increase(nestor_apiserver_outages_total{${SELECTOR}}[$__range]))`, 'outages']],
          },
          {
            title: 'Reconciles held',
            description: 'nestor_apiserver_unreachable over time, per replica.',
            unit: 'none',
            queries: [[`max by (pod) (nestor_apiserver_unreachable{${SELECTOR}})`, '{{pod}}']],
          },
          {
            title: 'Throttled resources',
            description:
              'nestor_apiserver_throttled: resources the API server answers 429 (API Priority and Fairness), their requests sent one at a time, per replica.',
            unit: 'none',
            queries: [[`max by (pod, resource) (nestor_apiserver_throttled{${SELECTOR}})`, '{{pod}} {{resource}}']],
          },
          {
            title: 'Reads per second, cache or API server',
            description:
              'nestor_client_reads_total: KubeClient gets and lists by kind and by what answered them. Reads of a kind from the server cost a request each: cache it (own, owns or watch it) if it is read often.',
            unit: 'reqps',
            queries: [
              [
                `sum by (resource, verb, source) (rate(nestor_client_reads_total{${SELECTOR}}${RATE}))`,
                '{{resource}} {{verb}} from {{source}}',
              ],
            ],
          },
        ],
      ],
      [
        'Member clusters and storage-version migrations',
        [
          {
            title: 'Member clusters by phase',
            description:
              'nestor_fleet_member_cluster: the member clusters each replica runs (connecting, engaged, failed); spread over replicas, each reports its own.',
            unit: 'none',
            queries: [[`sum by (phase) (nestor_fleet_member_cluster{${SELECTOR}})`, '{{phase}}']],
          },
          {
            title: 'Member clusters held',
            description:
              'nestor_fleet_member_held: member clusters whose API server does not answer, their reconciles held.',
            unit: 'none',
            queries: [[`max by (cluster) (nestor_fleet_member_held{${SELECTOR}}) > 0`, '{{cluster}}']],
          },
          {
            title: 'Migration: objects per second, by result',
            description:
              'nestor_storage_version_migration_objects_total: objects the storage-version migration rewrote, found current, found gone, or failed on.',
            unit: 'ops',
            queries: [
              [
                `sum by (crd, result) (rate(nestor_storage_version_migration_objects_total{${SELECTOR}}${RATE}))`,
                '{{crd}} {{result}}',
              ],
            ],
          },
          {
            title: 'Migration: objects left',
            description:
              'nestor_storage_version_migration_remaining_objects: objects the running migration of each CRD has still to visit (0 when none runs).',
            unit: 'short',
            queries: [[`max by (crd) (nestor_storage_version_migration_remaining_objects{${SELECTOR}})`, '{{crd}}']],
          },
        ],
      ],
      [
        'Watches',
        [
          {
            title: 'Watch restarts and relists',
            description:
              "nestor_watch_restarts and nestor_watch_relists: times each resource's watch reconnected and listed anew, since the replica started.",
            unit: 'short',
            queries: [
              [`sum by (resource) (nestor_watch_restarts{${SELECTOR}})`, '{{resource}} restarts'],
              [`sum by (resource) (nestor_watch_relists{${SELECTOR}})`, '{{resource}} relists'],
            ],
          },
          {
            title: 'Watch silence',
            description:
              'nestor_watch_last_event_age_seconds: seconds since each watch last received anything (an event, a bookmark, its list).',
            unit: 's',
            queries: [[`max by (resource) (nestor_watch_last_event_age_seconds{${SELECTOR}})`, '{{resource}}']],
          },
        ],
      ],
      [
        'Leadership and shards',
        [
          {
            title: 'Leader',
            description: 'leader_election_master_status: 1 on the replica holding each Lease.',
            unit: 'none',
            queries: [[`max by (name, pod) (leader_election_master_status{${SELECTOR}})`, '{{name}} {{pod}}']],
          },
          {
            title: 'Objects per shard',
            description: 'nestor_shard_objects: objects of sharded kinds each shard caches and reconciles.',
            unit: 'short',
            queries: [[`sum by (ring, shard) (nestor_shard_objects{${SELECTOR}})`, '{{ring}} {{shard}}']],
          },
          {
            title: 'Shard moves and hand-overs per second',
            description:
              'nestor_shard_moves_total (assign, drain; written by the leader) and nestor_shard_handovers_total (per shard).',
            unit: 'ops',
            queries: [
              [`sum by (ring, type) (rate(nestor_shard_moves_total{${SELECTOR}}${RATE}))`, '{{ring}} {{type}}'],
              [
                `sum by (ring, shard) (rate(nestor_shard_handovers_total{${SELECTOR}}${RATE}))`,
                '{{ring}} {{shard}} hand-overs',
              ],
            ],
          },
          {
            title: 'Rebalance and drain (p99)',
            description:
              'nestor_shard_rebalance_duration_seconds (a pass of the assigner) and nestor_shard_drain_duration_seconds (asked to let go to hand-over).',
            unit: 's',
            queries: [
              [
                `histogram_quantile(0.99, sum by (ring, le) (rate(nestor_shard_rebalance_duration_seconds_bucket{${SELECTOR}}${RATE})))`,
                'p99 rebalance {{ring}}',
              ],
              [
                `histogram_quantile(0.99, sum by (ring, le) (rate(nestor_shard_drain_duration_seconds_bucket{${SELECTOR}}${RATE})))`,
                'p99 drain {{ring}}',
              ],
            ],
          },
        ],
      ],
      [
        'Webhooks',
        [
          {
            title: 'Requests per second, by status',
            description: 'controller_runtime_webhook_requests_total per path and HTTP status code.',
            unit: 'reqps',
            queries: [
              [
                `sum by (webhook, code) (rate(controller_runtime_webhook_requests_total{${SELECTOR}}${RATE}))`,
                '{{webhook}} {{code}}',
              ],
            ],
          },
          {
            title: 'Latency (p50, p90, p99)',
            description:
              'controller_runtime_webhook_latency_seconds: the API server waits this long on each review (its timeout is 10 s by default).',
            unit: 's',
            queries: quantiles('controller_runtime_webhook_latency_seconds', SELECTOR, 'webhook', '{{webhook}}'),
          },
          {
            title: 'Denials per second',
            description:
              'nestor_webhook_denials_total: admission reviews answered allowed=false, by code (500: the handler threw), and conversions that failed.',
            unit: 'ops',
            queries: [
              [
                `sum by (webhook, code) (rate(nestor_webhook_denials_total{${SELECTOR}}${RATE}))`,
                '{{webhook}} {{code}}',
              ],
            ],
          },
          {
            title: 'Reviews in flight',
            description: 'controller_runtime_webhook_requests_in_flight.',
            unit: 'short',
            queries: [[`sum by (webhook) (controller_runtime_webhook_requests_in_flight{${SELECTOR}})`, '{{webhook}}']],
          },
        ],
      ],
      [
        'Events and the process',
        [
          {
            title: 'Events written and dropped per second',
            description: 'nestor_events_written_total (create, patch) and nestor_events_dropped_total by reason.',
            unit: 'ops',
            queries: [
              [`sum by (verb) (rate(nestor_events_written_total{${SELECTOR}}${RATE}))`, 'written {{verb}}'],
              [`sum by (reason) (rate(nestor_events_dropped_total{${SELECTOR}}${RATE}))`, 'dropped {{reason}}'],
            ],
          },
          {
            title: 'Memory',
            description: 'process_resident_memory_bytes and nodejs_heap_size_used_bytes, per replica.',
            unit: 'bytes',
            queries: [
              [`max by (pod) (process_resident_memory_bytes{${SELECTOR}})`, '{{pod}} RSS'],
              [`max by (pod) (nodejs_heap_size_used_bytes{${SELECTOR}})`, '{{pod}} heap used'],
            ],
          },
          {
            title: 'CPU',
            description: 'process_cpu_seconds_total: cores used, per replica.',
            unit: 'none',
            queries: [[`sum by (pod) (rate(process_cpu_seconds_total{${SELECTOR}}${RATE}))`, '{{pod}}']],
          },
          {
            title: 'Event loop lag (p99)',
            description: 'nodejs_eventloop_lag_p99_seconds: how late timers and I/O callbacks run, per replica.',
            unit: 's',
            queries: [[`max by (pod) (nodejs_eventloop_lag_p99_seconds{${SELECTOR}})`, '{{pod}}']],
          },
        ],
      ],
    ]),
  );
}

/** A dashboard uid: at most 40 characters, Grafana's limit. */
function uidOf(name: string, part: string): string {
  const suffix = `-${part}`;
  return name.slice(0, 40 - suffix.length).replace(/-+$/, '') + suffix;
}

/** The dashboards of an operator, by file name (`<name>-controllers.json`, `<name>-runtime.json`). */
export function grafanaDashboards(name: string): Record<string, GrafanaDashboard> {
  return {
    [`${name}-controllers.json`]: controllersDashboard(name),
    [`${name}-runtime.json`]: runtimeDashboard(name),
  };
}

/** The label Grafana's dashboard sidecar (kube-prometheus-stack, the grafana chart) looks for. */
export const GRAFANA_SIDECAR_LABEL = 'grafana_dashboard';

/**
 * The dashboards as a ConfigMap Grafana's sidecar provisions: labelled `grafana_dashboard:
 * "1"` (the charts' default `sidecar.dashboards.label` and `labelValue`), one key per file.
 */
export function grafanaDashboardsConfigMap(
  name: string,
  namespace: string,
  dashboards: Record<string, GrafanaDashboard> = grafanaDashboards(name),
): Manifest {
  const data: Record<string, string> = {};
  for (const [file, dashboard] of Object.entries(dashboards)) data[file] = JSON.stringify(dashboard);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${name}-grafana-dashboards`,
      namespace,
      labels: { ...operatorLabels(name), [GRAFANA_SIDECAR_LABEL]: '1' },
    },
    data,
  };
}
