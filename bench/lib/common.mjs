// What the load generator, the operators under test and the report share.

/** The benchmark's custom resource: a Widget with a status subresource. */
export const GROUP = 'bench.nestor.dev';
export const VERSION = 'v1';
export const WIDGETS = Object.freeze({
  group: GROUP,
  version: VERSION,
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

export const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                // payload: the sync scenario's ~1 KiB Widgets (bench/run.mjs --sync-kinds widget).
                properties: { size: { type: 'integer' }, round: { type: 'integer' }, payload: { type: 'string' } },
              },
              status: {
                type: 'object',
                properties: { observedGeneration: { type: 'integer' }, phase: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
};

/** Written by the load generator on each change: its clock, in microseconds since the epoch. */
export const WRITTEN_AT = 'bench.nestor.dev/written-at';
export const FIELD_MANAGER = 'bench';

export const widgetsPath = (ns, name = '') =>
  `/apis/${GROUP}/${VERSION}/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;
export const configMapsPath = (ns, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

/**
 * The child ConfigMap every implementation applies for a Widget: the same intent. Nestor
 * adds the owner reference itself (`apply(..., { owner })`), so it asks for none here.
 */
export function childConfigMap(widget, { ownerReference = true } = {}) {
  const { name, namespace, uid } = widget.metadata;
  const owner = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Widget',
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${name}-child`,
      namespace,
      ...(ownerReference ? { ownerReferences: [owner] } : {}),
    },
    data: { size: String(widget.spec?.size ?? 0), round: String(widget.spec?.round ?? 0) },
  };
}

export const statusFor = (widget) => ({ observedGeneration: widget.metadata.generation, phase: 'Ready' });

/** Wall clock in microseconds since the epoch, comparable across processes on this machine. */
export const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** ~1 KiB of JSON per ConfigMap, as the brief asks. */
export const PAYLOAD = 'x'.repeat(860);

/**
 * The kinds the sync scenario caches (bench/run.mjs --sync-kinds): a built-in kind (protobuf
 * where the client speaks it) and the benchmark's custom resource (JSON), each ~1 KiB.
 */
export const SYNC_KINDS = {
  configmap: {
    label: 'ConfigMaps',
    path: configMapsPath,
    body: (name) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { app: 'bench' } },
      data: { payload: PAYLOAD },
    }),
  },
  widget: {
    label: 'Widgets',
    path: widgetsPath,
    body: (name) => ({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Widget',
      metadata: { name, labels: { app: 'bench' } },
      spec: { size: 1, round: 0, payload: PAYLOAD },
    }),
  },
};

// ---- statistics ----

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function mean(values) {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/** Sample standard deviation (n - 1); 0 for a single value. */
export function stddev(values) {
  if (values.length < 2) return 0;
  const m = mean(values);
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1));
}

/** The median of the finite values, or null when there is none. */
export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
