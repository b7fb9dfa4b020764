// Load for the webhook benchmark: AdmissionReview v1 bodies as kube-apiserver sends them
// (an UPDATE of a ~1 KiB Widget with its oldObject), posted over HTTPS keep-alive at a
// fixed rate (open loop, latency from each request's scheduled time so a slow server is not
// hidden by a generator that waits for it: no coordinated omission), or as fast as a fixed
// number of requests in flight allows (closed loop, for the maximum throughput).
import { randomUUID } from 'node:crypto';
import { percentile, sleep } from './common.mjs';
import { LeanHttpsClient } from './lean-https-client.mjs';

/** A Widget as the API server stores it: managedFields, labels, annotations; ~1 KiB of JSON. */
export function benchWidget({
  namespace = 'bench',
  name = 'widget-0',
  round = 1,
  size = 3,
  group = 'bench.nestor.dev',
} = {}) {
  const time = '2026-11-24T10:00:00Z';
  return {
    apiVersion: `${group}/v1`,
    kind: 'Widget',
    metadata: {
      name,
      namespace,
      uid: '6f1c7a52-9d8e-4f4b-9a51-3c2d7e1b0a44',
      resourceVersion: String(100000 + round),
      generation: round + 1,
      creationTimestamp: time,
      labels: {
        app: 'bench',
        'app.kubernetes.io/name': 'widget',
        'app.kubernetes.io/part-of': 'nestor-bench',
        tier: 'backend',
      },
      annotations: { 'bench.nestor.dev/owner': 'team-a', 'bench.nestor.dev/written-at': '1763978400000000' },
      managedFields: [
        {
          manager: 'bench',
          operation: 'Update',
          apiVersion: `${group}/v1`,
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:bench.nestor.dev/owner': {}, 'f:bench.nestor.dev/written-at': {} },
              'f:labels': {
                '.': {},
                'f:app': {},
                'f:app.kubernetes.io/name': {},
                'f:app.kubernetes.io/part-of': {},
                'f:tier': {},
              },
            },
            'f:spec': { '.': {}, 'f:round': {}, 'f:size': {} },
          },
        },
        {
          manager: 'bench-controller',
          operation: 'Update',
          apiVersion: `${group}/v1`,
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { '.': {}, 'f:observedGeneration': {}, 'f:phase': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: { size, round },
    status: { observedGeneration: round, phase: 'Ready' },
  };
}

const UID = '00000000-0000-0000-0000-000000000000';

/**
 * The body of an UPDATE review (new object with spec.round one higher than the old), as a
 * template: `body(uid)` puts a fresh uid in without serializing the objects again.
 */
export function updateReviewTemplate({ namespace = 'bench', name = 'widget-0' } = {}) {
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: UID,
      kind: { group: 'bench.nestor.dev', version: 'v1', kind: 'Widget' },
      resource: { group: 'bench.nestor.dev', version: 'v1', resource: 'widgets' },
      requestKind: { group: 'bench.nestor.dev', version: 'v1', kind: 'Widget' },
      requestResource: { group: 'bench.nestor.dev', version: 'v1', resource: 'widgets' },
      name,
      namespace,
      operation: 'UPDATE',
      userInfo: {
        username: 'system:serviceaccount:bench:bench-client',
        uid: '2b5f0c1e-6a3d-4e8b-9f7a-1d4c6b8e2a90',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:bench', 'system:authenticated'],
      },
      object: benchWidget({ namespace, name, round: 8 }),
      oldObject: benchWidget({ namespace, name, round: 7 }),
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'bench' },
    },
  };
  const [head, tail] = JSON.stringify(review).split(UID);
  return {
    body: (uid) => head + uid + tail,
    bytes: Buffer.byteLength(head + UID + tail),
    objectBytes: JSON.stringify(review.request.object).length,
  };
}

/**
 * Posts reviews to one webhook server over keep-alive HTTPS (LeanHttpsClient: the generator
 * must cost the shared cores as little as it can), trusting `ca`, from `localAddress` if given.
 */
export function reviewClient({ host, port, path, ca, maxSockets = 32, localAddress }) {
  const client = new LeanHttpsClient({ host, port, ca, maxSockets, localAddress });
  const template = updateReviewTemplate();
  const target = `${path}?timeout=10s`;
  /** Posts one review; resolves with true when answered 200 allowed with the same uid. */
  const post = () => {
    const uid = randomUUID();
    return client.post(target, template.body(uid)).then(
      ({ status, body }) => {
        if (status !== 200) return false;
        const { response } = JSON.parse(body.toString('utf8'));
        return response?.uid === uid && response.allowed === true;
      },
      () => false,
    );
  };
  return { post, template, close: () => client.close() };
}

/**
 * Calls `call()` (a promise of true when the request succeeded) `rate` times a second for
 * `seconds`, each at its scheduled time whatever the earlier ones do; latency is from the
 * scheduled time to the answer. More than `maxInFlight` unanswered means the server does not
 * keep up: the run stops there (`overloaded`) instead of queueing without bound.
 */
export async function openLoop(call, { rate, seconds, maxInFlight = 4096 }) {
  const latUs = [];
  let issued = 0;
  let failed = 0;
  let inFlight = 0;
  let overloaded = false;
  let lateMaxMs = 0;
  const pending = new Set();
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const fire = (scheduled) => {
    inFlight++;
    issued++;
    const p = call().then((ok) => {
      inFlight--;
      if (ok) latUs.push((performance.now() - scheduled) * 1000);
      else failed++;
      pending.delete(p);
    });
    pending.add(p);
  };
  while (issued < total && !overloaded) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - t0) * rate) / 1000) + 1);
    for (; issued < due;) {
      if (inFlight >= maxInFlight) {
        overloaded = true;
        break;
      }
      const scheduled = t0 + (issued * 1000) / rate;
      lateMaxMs = Math.max(lateMaxMs, now - scheduled);
      fire(scheduled);
    }
    // Sleep at least 1 ms and fire what fell due meanwhile, never spin: the generator shares
    // the cores with the server it measures (latency still counts from each scheduled time).
    await sleep(Math.max(1, Math.floor(t0 + (issued * 1000) / rate - performance.now())));
  }
  const sentFor = (performance.now() - t0) / 1000;
  await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  latUs.sort((a, b) => a - b);
  return {
    offered: rate,
    issued,
    failed,
    overloaded,
    sentForSeconds: sentFor,
    achievedRate: latUs.length / elapsed,
    generatorLateMaxMs: lateMaxMs,
    ...latencySummary(latUs),
  };
}

/** `concurrency` requests always in flight for `seconds`: the most the server answers. */
export async function closedLoop(call, { concurrency, seconds }) {
  const latUs = [];
  let failed = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        if (await call()) latUs.push((performance.now() - start) * 1000);
        else failed++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  latUs.sort((a, b) => a - b);
  return { concurrency, failed, achievedRate: latUs.length / elapsed, ...latencySummary(latUs) };
}

function latencySummary(sortedUs) {
  return {
    answered: sortedUs.length,
    p50Ms: percentile(sortedUs, 50) / 1000,
    p90Ms: percentile(sortedUs, 90) / 1000,
    p99Ms: percentile(sortedUs, 99) / 1000,
    p999Ms: percentile(sortedUs, 99.9) / 1000,
    maxMs: (sortedUs.at(-1) ?? NaN) / 1000,
  };
}
