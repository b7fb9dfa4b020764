// The webhook benchmark (`node bench/run.mjs --mode webhooks`): the same validating webhook
// served by Nestor without Nest (bench/webhooks/nestor.mjs), by Nestor in a Nest app
// (bench/webhooks/nestor-nest.mjs) and by controller-runtime (bench/controller-runtime,
// -mode webhook), each in its own process so its CPU (/proc/<pid>/stat) and memory are its
// own; this process is the load generator.
//   admission   reviews posted to each server directly at fixed rates (open loop), then as
//               many as 64 in flight allow (closed loop)
//   e2e         dry-run creates through the real API server with the webhook installed
//   conversion  a LIST of N Widgets stored as v1, read as v2 through the API server, each
//               peer the CRD's conversion webhook
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { certificateAuthority, selfSignedCertificate } from '@nestor/core';
import { freePort, parallel, waitFor } from '@nestor/testing';
import { closedLoop, openLoop, reviewClient } from './admission-load.mjs';
import { LeanHttpsClient } from './lean-https-client.mjs';
import { OperatorProcess, processCpuSeconds, processMemory } from './child.mjs';
import { widgetsPath } from './common.mjs';
import { VALIDATE_PATH } from '../webhooks/rule.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const WEBHOOK_IMPLS = ['nestor', 'nestor-nest', 'controller-runtime'];
/**
 * Run only when named: the servers offering HTTP/2 (ALPN h2, HTTP/1.1 still served), and the
 * rule routed through Nest's HTTP stack (platform-express; admission only).
 */
export const OPTIONAL_WEBHOOK_IMPLS = ['nestor-http2', 'nestor-nest-http2', 'controller-runtime-http2', 'nest-express'];
const SCRIPTS = {
  nestor: join(here, '..', 'webhooks', 'nestor.mjs'),
  'nestor-http2': join(here, '..', 'webhooks', 'nestor.mjs'),
  'nestor-nest': join(here, '..', 'webhooks', 'nestor-nest.mjs'),
  'nestor-nest-http2': join(here, '..', 'webhooks', 'nestor-nest.mjs'),
  'nest-express': join(here, '..', 'webhooks', 'nest-express.mjs'),
};
const HOST = '127.0.0.1';
const MB = 2 ** 20;

/** A CA and a serving certificate for 127.0.0.1 in a temporary directory (tls.crt, tls.key). */
async function servingCertificate() {
  const ca = certificateAuthority({ commonName: 'nestor-bench-webhook-ca' });
  const { cert, key } = selfSignedCertificate({ hosts: [HOST], issuer: ca });
  const dir = await mkdtemp(join(tmpdir(), 'nestor-bench-webhook-'));
  await writeFile(join(dir, 'tls.crt'), cert);
  await writeFile(join(dir, 'tls.key'), key, { mode: 0o600 });
  return { dir, ca: ca.cert };
}

async function startPeer(ctx, impl, { certDir, port }) {
  const peer = await OperatorProcess.start(impl.replace(/-http2$/, ''), {
    kubeconfig: ctx.env.kubeconfigPath,
    namespace: 'default',
    mode: 'webhook',
    goBinary: ctx.goBinary,
    nodeFlags: ctx.config.nodeFlags,
    ...(SCRIPTS[impl] ? { script: SCRIPTS[impl] } : {}),
    extraArgs: [
      '--cert-dir',
      certDir,
      '--port',
      String(port),
      '--host',
      HOST,
      ...(impl.endsWith('-http2') ? ['--http2', 'true'] : []),
    ],
  });
  const ready = await peer.next('ready', 120_000);
  return { peer, ready };
}

/** The peer's CPU seconds and memory, read from /proc (the same way for Go and Node). */
const usage = (pid) => ({ cpu: processCpuSeconds(pid), ...processMemory(pid) });

const rotated = (impls, rep) => impls.map((_, i) => impls[(i + rep) % impls.length]);

// ---- admission reviews straight to each server ----

export async function scenarioAdmission(ctx) {
  const { config, doc, log } = ctx;
  const serving = await servingCertificate();
  try {
    for (let rep = 0; rep < config.webhookReps; rep++) {
      for (const impl of rotated(config.impls, rep)) {
        if (ctx.overBudget()) {
          doc.skipped.push(`admission ${impl} rep ${rep + 1}: over the time budget`);
          continue;
        }
        let peer;
        let client;
        try {
          await ctx.settle();
          const port = await freePort();
          ({ peer } = await startPeer(ctx, impl, { certDir: serving.dir, port }));
          client = reviewClient({ host: HOST, port, path: VALIDATE_PATH, ca: serving.ca });
          const idle = usage(peer.pid);
          // Warm-up: connections, JIT; not measured.
          await openLoop(client.post, { rate: 500, seconds: 2 });
          const measure = async (rate, run) => {
            const before = usage(peer.pid);
            const generator0 = process.cpuUsage();
            const result = await run();
            const generator = process.cpuUsage(generator0);
            const after = usage(peer.pid);
            const elapsed = result.elapsedSeconds;
            const cpuSeconds = after.cpu - before.cpu;
            const record = {
              impl,
              rate,
              rep: rep + 1,
              ...result,
              cpuSeconds,
              cpuUsPerReview: (cpuSeconds / result.answered) * 1e6,
              cpuCores: cpuSeconds / elapsed,
              generatorCpuCores: (generator.user + generator.system) / 1e6 / elapsed,
              rssIdleMB: idle.rss / MB,
              rssMB: after.rss / MB,
              maxRssMB: after.maxRss / MB,
              held:
                !result.overloaded && result.failed === 0 && result.achievedRate >= 0.95 * rate && result.p99Ms < 1000
                  ? 1
                  : 0,
            };
            doc.runs.admission.push(record);
            log(
              `admission ${impl} ${rate === 'max' ? `max (${config.webhookConcurrency} in flight)` : `${rate}/s`}: ` +
                `${record.achievedRate.toFixed(0)} reviews/s, p50 ${record.p50Ms.toFixed(2)} / p99 ${record.p99Ms.toFixed(2)} ms, ` +
                `CPU ${record.cpuCores.toFixed(2)} cores (${record.cpuUsPerReview.toFixed(0)} µs/review), RSS ${record.rssMB.toFixed(0)} MB` +
                `${result.failed ? `, ${result.failed} failed` : ''}${result.overloaded ? ', overloaded' : ''}`,
            );
            return record;
          };
          for (const rate of config.webhookRates) {
            const record = await measure(rate, async () => {
              const t0 = performance.now();
              const r = await openLoop(client.post, { rate, seconds: config.webhookSeconds });
              return { ...r, elapsedSeconds: (performance.now() - t0) / 1000 };
            });
            if (!record.held) {
              doc.skipped.push(`admission ${impl} rates above ${rate}/s: ${rate}/s not held`);
              break;
            }
          }
          await measure('max', async () => {
            const t0 = performance.now();
            const r = await closedLoop(client.post, {
              concurrency: config.webhookConcurrency,
              seconds: config.webhookSeconds,
            });
            return { ...r, elapsedSeconds: (performance.now() - t0) / 1000 };
          });
        } catch (error) {
          log(`admission ${impl} failed: ${error.message}`);
          doc.skipped.push(`admission ${impl} rep ${rep + 1}: ${error.message.split('\n')[0]}`);
        } finally {
          client?.close();
          await peer?.stop();
        }
      }
    }
  } finally {
    await rm(serving.dir, { recursive: true, force: true });
  }
}

// ---- through the API server: dry-run creates with the webhook installed ----

function validatingConfiguration(namespace) {
  return {
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: `bench-widgets-${namespace}` },
    webhooks: [
      {
        name: 'validate.widgets.bench.nestor.dev',
        clientConfig: { service: { namespace: 'default', name: 'bench-webhooks', path: VALIDATE_PATH } },
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: ['bench.nestor.dev'],
            apiVersions: ['v1'],
            resources: ['widgets'],
          },
        ],
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      },
    ],
  };
}

const dryRunWidget = (namespace, size) => ({
  apiVersion: 'bench.nestor.dev/v1',
  kind: 'Widget',
  metadata: { generateName: 'widget-', namespace, labels: { app: 'bench' } },
  spec: { size, round: 0 },
});

export async function scenarioApiServerAdmission(ctx) {
  const { config, doc, env, load, log } = ctx;
  const ns = await env.createNamespace('webhooks');
  const plain = await env.createNamespace('no-webhooks');
  const webhooks = await env.installWebhooks({ configurations: [validatingConfiguration(ns)] });
  const create = (namespace, size = 3) =>
    load.json('POST', `${widgetsPath(namespace)}?dryRun=All`, { body: dryRunWidget(namespace, size) }).then(
      () => true,
      () => false,
    );
  const measure = async (impl, rate, rep, peer) => {
    const pid = peer?.pid;
    await ctx.settle();
    const stats0 = await peer?.ask({ cmd: 'stats' }, 'stats');
    const cp0 = ctx.controlPlaneCpu();
    const before = pid ? usage(pid) : undefined;
    const t0 = performance.now();
    const result = await openLoop(() => create(impl === 'none' ? plain : ns), { rate, seconds: config.webhookSeconds });
    const elapsed = (performance.now() - t0) / 1000;
    const after = pid ? usage(pid) : undefined;
    const stats1 = await peer?.ask({ cmd: 'stats' }, 'stats');
    const record = {
      impl,
      rate,
      rep,
      ...result,
      elapsedSeconds: elapsed,
      controlPlaneCpuCores: (ctx.controlPlaneCpu() - cp0) / elapsed,
      ...(pid
        ? {
            cpuCores: (after.cpu - before.cpu) / elapsed,
            cpuUsPerReview: ((after.cpu - before.cpu) / result.answered) * 1e6,
            rssMB: after.rss / MB,
            // New TLS connections the API server opened to the webhook (it keeps 25 idle at most).
            connectionsPer100: ((stats1.connections - stats0.connections) / result.answered) * 100,
          }
        : {}),
      held:
        !result.overloaded && result.failed === 0 && result.achievedRate >= 0.95 * rate && result.p99Ms < 1000 ? 1 : 0,
    };
    doc.runs.e2e.push(record);
    log(
      `e2e ${impl} ${rate}/s: ${record.achievedRate.toFixed(0)} creates/s, p50 ${record.p50Ms.toFixed(2)} / p99 ${record.p99Ms.toFixed(2)} ms, ` +
        `API server+etcd ${record.controlPlaneCpuCores.toFixed(2)} cores` +
        (pid
          ? `, webhook ${record.cpuCores.toFixed(2)} cores, ${record.connectionsPer100.toFixed(1)} new connections per 100 reviews`
          : '') +
        `${result.failed ? `, ${result.failed} failed` : ''}`,
    );
  };
  try {
    for (let rep = 0; rep < config.webhookReps; rep++) {
      for (const rate of config.e2eRates) {
        if (ctx.overBudget()) break;
        // Without any webhook (a namespace the configuration does not select): the API server's own cost.
        await measure('none', rate, rep + 1);
        for (const impl of rotated(config.impls, rep)) {
          if (ctx.overBudget()) {
            doc.skipped.push(`e2e ${impl} ${rate}/s rep ${rep + 1}: over the time budget`);
            continue;
          }
          let peer;
          try {
            ({ peer } = await startPeer(ctx, impl, { certDir: webhooks.certDir, port: webhooks.port }));
            // The API server loads configurations asynchronously: wait until a request reaches this peer.
            await waitFor(
              async () =>
                load.json('POST', `${widgetsPath(ns)}?dryRun=All`, { body: dryRunWidget(ns, 1000) }).then(
                  () => false,
                  (error) => error.status === 422,
                ),
              { timeoutMs: 30_000, what: `${impl} answering the API server` },
            );
            await create(ns); // one allowed, so the API server's connection to it is open
            await measure(impl, rate, rep + 1, peer);
          } catch (error) {
            log(`e2e ${impl} ${rate}/s failed: ${error.message}`);
            doc.skipped.push(`e2e ${impl} ${rate}/s rep ${rep + 1}: ${error.message.split('\n')[0]}`);
          } finally {
            await peer?.stop();
          }
        }
      }
    }
  } finally {
    await webhooks.uninstall();
  }
}

// ---- conversion: LIST of N Widgets stored as v1, read as v2 ----

const CONVERSION_GROUP = 'conversion.bench.nestor.dev';
/** The API server runs without a watch cache for it (run.mjs): LISTs go to etcd and through the webhook. */
export const CONVERSION_RESOURCE = `widgets.${CONVERSION_GROUP}`;

function conversionCrd({ url, caBundle }) {
  const spec = (sizeField) => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          [sizeField]: { type: 'integer' },
          round: { type: 'integer' },
          description: { type: 'string' },
        },
      },
      status: {
        type: 'object',
        properties: { observedGeneration: { type: 'integer' }, phase: { type: 'string' } },
      },
    },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${CONVERSION_GROUP}` },
    spec: {
      group: CONVERSION_GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: spec('size') },
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          subresources: { status: {} },
          schema: { openAPIV3Schema: spec('replicas') },
        },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url, caBundle } },
      },
    },
  };
}

const conversionPath = (version, ns) => `/apis/${CONVERSION_GROUP}/${version}/namespaces/${ns}/widgets`;

/**
 * One ConversionReview holding every stored object, posted straight to the peer: the
 * converter's throughput, without the API server (which sends one object per review when it
 * reads from etcd).
 */
async function convertDirectly(ctx, impl, peer, { port, ca, objects }) {
  const { config, doc, log } = ctx;
  const client = new LeanHttpsClient({ host: HOST, port, ca, maxSockets: 1 });
  try {
    for (let rep = 0; rep < config.conversionReps; rep++) {
      const uid = randomUUID();
      const body = JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid, desiredAPIVersion: `${CONVERSION_GROUP}/v2`, objects },
      });
      await ctx.settle();
      const before = usage(peer.pid);
      const t0 = performance.now();
      const answer = await client.post('/convert?timeout=30s', body);
      const ms = performance.now() - t0;
      const after = usage(peer.pid);
      const { response } = JSON.parse(answer.body.toString('utf8'));
      const converted = response?.convertedObjects?.filter((o) => o.spec?.replicas === 3).length ?? 0;
      if (answer.status !== 200 || response.uid !== uid || converted !== objects.length) {
        throw new Error(
          `${impl}: one review of ${objects.length} objects answered ${answer.status}, ${converted} converted: ${response?.result?.message ?? ''}`,
        );
      }
      const record = {
        impl,
        objects: objects.length,
        rep: rep + 1,
        bodyMB: Buffer.byteLength(body) / MB,
        wallMs: ms,
        webhookCpuMs: (after.cpu - before.cpu) * 1000,
        maxRssMB: after.maxRss / MB,
      };
      doc.runs.conversionDirect.push(record);
      log(
        `conversion ${impl}: one review of ${objects.length} (${record.bodyMB.toFixed(1)} MB) answered in ${ms.toFixed(0)} ms, ` +
          `webhook CPU ${record.webhookCpuMs.toFixed(0)} ms, peak RSS ${record.maxRssMB.toFixed(0)} MB`,
      );
    }
  } finally {
    client.close();
  }
}

/** Which implementations can serve /convert: the Go peer always; Nestor's once its conversion API is in. */
export async function conversionImpls(impls) {
  const { conversionAvailable } = await import('../webhooks/conversion.mjs');
  const nestor = await conversionAvailable();
  return impls.filter((impl) => impl.startsWith('controller-runtime') || (nestor && impl !== 'nest-express'));
}

export async function scenarioConversion(ctx) {
  const { config, doc, env, load, log } = ctx;
  const impls = await conversionImpls(config.impls);
  for (const impl of config.impls.filter((i) => !impls.includes(i))) {
    doc.skipped.push(`conversion ${impl}: no Nestor conversion API in this build (bench/webhooks/conversion.mjs)`);
  }
  // A local CA and port, as for admission; the CRD's conversion points at it.
  const serving = await env.installWebhooks({ configurations: [] });
  const crd = conversionCrd({
    url: `https://${serving.host}:${serving.port}/convert`,
    caBundle: Buffer.from(serving.caCertificate).toString('base64'),
  });
  await env.client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd).catch((error) => {
    if (error.status !== 409) throw error;
  });
  await waitFor(
    async () =>
      env.client.request('GET', `/apis/${CONVERSION_GROUP}/v1`).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 30_000, what: `${CONVERSION_GROUP}/v1 served` },
  );
  const ns = await env.createNamespace('conversion');
  const n = config.conversionObjects;
  const t = Date.now();
  await parallel(
    Array.from({ length: n }, (_, i) => `widget-${i}`),
    32,
    (name) =>
      load.json('POST', conversionPath('v1', ns), {
        body: {
          apiVersion: `${CONVERSION_GROUP}/v1`,
          kind: 'Widget',
          metadata: {
            name,
            labels: { app: 'bench', tier: 'backend' },
            annotations: { 'bench.nestor.dev/owner': 'team-a' },
          },
          spec: { size: 3, round: 1, description: 'd'.repeat(640) },
        },
      }),
  );
  log(`conversion: ${n} Widgets created as v1 in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const list = async (version) => {
    const t0 = performance.now();
    const body = await load.json('GET', conversionPath(version, ns), { timeoutMs: 120_000 });
    return { ms: performance.now() - t0, body };
  };
  let stored = [];
  try {
    // The API server alone: the same LIST at the stored version, no conversion.
    for (let rep = 0; rep < config.conversionReps; rep++) {
      await ctx.settle();
      const cp0 = ctx.controlPlaneCpu();
      const { ms, body } = await list('v1');
      stored = body.items.map((item) => ({ apiVersion: `${CONVERSION_GROUP}/v1`, kind: 'Widget', ...item }));
      doc.runs.conversion.push({
        impl: 'none',
        objects: body.items.length,
        rep: rep + 1,
        wallMs: ms,
        controlPlaneCpuMs: (ctx.controlPlaneCpu() - cp0) * 1000,
      });
      log(`conversion: LIST of ${body.items.length} at v1 (no conversion) ${ms.toFixed(0)} ms`);
    }
    for (const impl of impls) {
      if (ctx.overBudget()) {
        doc.skipped.push(`conversion ${impl}: over the time budget`);
        continue;
      }
      let peer;
      try {
        ({ peer } = await startPeer(ctx, impl, { certDir: serving.certDir, port: serving.port }));
        // Until the API server reaches this peer, a LIST at v2 fails.
        await waitFor(
          async () =>
            load.json('GET', `${conversionPath('v2', ns)}?limit=1`).then(
              () => true,
              () => false,
            ),
          { timeoutMs: 30_000, what: `${impl} converting for the API server` },
        );
        await convertDirectly(ctx, impl, peer, { port: serving.port, ca: serving.caCertificate, objects: stored });
        for (let rep = 0; rep < config.conversionReps; rep++) {
          await ctx.settle();
          const stats0 = await peer.ask({ cmd: 'stats' }, 'stats');
          const before = usage(peer.pid);
          const cp0 = ctx.controlPlaneCpu();
          const { ms, body } = await list('v2');
          const cp1 = ctx.controlPlaneCpu();
          const after = usage(peer.pid);
          const stats1 = await peer.ask({ cmd: 'stats' }, 'stats');
          const converted = body.items.filter(
            (item) => item.apiVersion === `${CONVERSION_GROUP}/v2` && item.spec?.replicas === 3,
          );
          if (converted.length !== n)
            throw new Error(`${impl}: ${converted.length} of ${body.items.length} items converted to v2`);
          const record = {
            impl,
            objects: body.items.length,
            rep: rep + 1,
            wallMs: ms,
            webhookCpuMs: (after.cpu - before.cpu) * 1000,
            controlPlaneCpuMs: (cp1 - cp0) * 1000,
            // The Nest peer does not see reviews, only its converter's calls.
            ...(impl === 'nestor-nest' ? {} : { reviews: stats1.conversions - stats0.conversions }),
            rssMB: after.rss / MB,
            maxRssMB: after.maxRss / MB,
          };
          doc.runs.conversion.push(record);
          log(
            `conversion ${impl}: LIST of ${n} as v2 in ${ms.toFixed(0)} ms, webhook CPU ${record.webhookCpuMs.toFixed(0)} ms ` +
              `${record.reviews === undefined ? '' : `in ${record.reviews} reviews`}, API server+etcd CPU ${record.controlPlaneCpuMs.toFixed(0)} ms, RSS ${record.rssMB.toFixed(0)} MB`,
          );
        }
      } catch (error) {
        log(`conversion ${impl} failed: ${error.message}`);
        doc.skipped.push(`conversion ${impl}: ${error.message.split('\n')[0]}`);
      } finally {
        await peer?.stop();
      }
    }
  } finally {
    await env.client
      .request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${CONVERSION_GROUP}`)
      .catch(() => {});
    await serving.uninstall();
  }
}
