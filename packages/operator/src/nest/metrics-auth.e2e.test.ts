// Secure metrics against a real API server: the operator runs as the ServiceAccount and
// RBAC that `nestor manifests` writes, serves /metrics over HTTPS, and lets in only a
// caller whose token the API server accepts and whose user may `get /metrics`; the probes
// stay plain HTTP and tell nothing internal.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, request, type RequestOptions } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Test, type TestingModule } from '@nestjs/testing';
import { KubeConfig } from '@kubernetes/client-node';
import type { V1ConfigMap } from '../client/kinds.js';
import { Transport } from '@nestor/core';
import { freePort, TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, OperatorModule, Reconcile } from '../index.js';
import { operatorManifests, type Manifest } from '../manifests-entry.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { parseMetrics, valueOf } from '../test-support/prometheus.js';

const NAME = `metrics-auth-${randomBytes(3).toString('hex')}`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let env: TestEnvironment;
let namespace: string;
const apps: TestingModule[] = [];
/** Cluster-scoped objects this file created, deleted after it. */
const clusterObjects: string[] = [];

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('metrics-auth');
});
after(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const path of clusterObjects) await env.client.raw('DELETE', path);
  await env.stop();
});

@Controller(ConfigMap, { name: 'metrics-auth-test' })
class CountingController {
  reconciled = 0;

  @Reconcile()
  reconcile(_: V1ConfigMap): void {
    this.reconciled++;
  }
}

/** Creates the object at its collection's path; cluster-scoped ones are deleted after the file. */
async function create(object: Manifest): Promise<void> {
  const collections: Record<string, string> = {
    ServiceAccount: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    ClusterRole: `${RBAC}/clusterroles`,
    ClusterRoleBinding: `${RBAC}/clusterrolebindings`,
  };
  const collection = collections[object.kind];
  assert.ok(collection, `no path for ${object.kind} in this test`);
  await env.client.request('POST', collection, object);
  if (!object.metadata.namespace && object.kind !== 'ServiceAccount') {
    clusterObjects.push(`${collection}/${object.metadata.name}`);
  }
}

async function serviceAccount(name: string): Promise<string> {
  await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  return tokenOf(name);
}

async function tokenOf(serviceAccountName: string): Promise<string> {
  const review = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccountName}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  return review.status.token;
}

/** Waits until the API server's authorizer (fed by informers) sees a binding: asked as the admin. */
async function waitUntilAllowed(user: string, attributes: object, what: string): Promise<void> {
  await waitFor(
    async () => {
      const review = await env.client.request<{ status: { allowed?: boolean } }>(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, ...attributes } },
      );
      return review.status.allowed === true;
    },
    { what },
  );
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  certificate?: PeerCertificate;
}

/** A GET over HTTPS that accepts the server's self-signed certificate and returns it (a new connection unless given an agent). */
function httpsGet(port: number, path: string, token?: string, agent?: Agent): Promise<Reply> {
  const options: RequestOptions = {
    host: '127.0.0.1',
    port,
    path,
    rejectUnauthorized: false,
    agent: agent ?? false,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  };
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const certificate = (res.socket as TLSSocket).getPeerCertificate();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, certificate }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.text() };
}

describe('secure metrics on a real API server', () => {
  it('serves /metrics over HTTPS to a metrics reader only: 401 without a token, 403 without the role', async (t) => {
    // The operator's identity: the ServiceAccount and ClusterRole `nestor manifests` writes.
    const manifests = operatorManifests({
      name: NAME,
      namespace,
      image: 'registry.example/unused:1',
      controllers: [{ resource: ConfigMap }],
      leaderElection: false,
    });
    for (const object of manifests.rbac.filter((m) => m.kind !== 'Namespace')) await create(object);
    const operatorUser = `system:serviceaccount:${namespace}:${NAME}`;
    const operatorToken = await tokenOf(NAME);

    // Prometheus, bound to the metrics-reader ClusterRole; a stranger, bound to nothing.
    const prometheusToken = await serviceAccount('prometheus');
    const strangerToken = await serviceAccount('stranger');
    await create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${NAME}-prometheus` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${NAME}-metrics-reader` },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace }],
    });
    // Asked as the admin, so that no denial is cached by the operator while RBAC propagates.
    const prometheusUser = `system:serviceaccount:${namespace}:prometheus`;
    await waitUntilAllowed(prometheusUser, { nonResourceAttributes: { path: '/metrics', verb: 'get' } }, 'Prometheus');
    for (const [group, resource] of [
      ['authentication.k8s.io', 'tokenreviews'],
      ['authorization.k8s.io', 'subjectaccessreviews'],
    ] as const) {
      await waitUntilAllowed(operatorUser, { resourceAttributes: { group, resource, verb: 'create' } }, resource);
    }

    const cluster = env.kubeConfig.getCurrentCluster()!;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
      users: [{ name: 'operator', token: operatorToken }],
      contexts: [{ name: 'test', cluster: 'test', user: 'operator' }],
      currentContext: 'test',
    });
    await createConfigMap(env.client, namespace, 'one');
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    const app = await Test.createTestingModule({
      imports: [
        OperatorModule.forRoot({
          kubeConfig,
          namespace,
          shutdownGraceMs: 10_000,
          // Defaults: HTTPS, TokenReview + SubjectAccessReview, a self-signed certificate.
          metrics: { port: metricsPort, host: '127.0.0.1' },
          health: { port: healthPort, host: '127.0.0.1' },
        }),
      ],
      providers: [CountingController],
    }).compile();
    apps.push(app);
    // Counts the operator's TokenReviews, the scraper's apart.
    const transport = app.get(Transport);
    const json = transport.json.bind(transport);
    const tokenReviews = { all: 0, scraper: 0 };
    transport.json = (method, path, options) => {
      if (path.endsWith('/tokenreviews')) {
        tokenReviews.all++;
        if ((options?.body as { spec?: { token?: string } }).spec?.token === prometheusToken) tokenReviews.scraper++;
      }
      return json(method, path, options);
    };
    await app.init();
    await waitFor(() => app.get(CountingController).reconciled > 0, { what: 'a reconcile' });

    // Plain HTTP gets no metrics from the HTTPS port.
    await assert.rejects(httpGet(metricsPort, '/metrics'), 'plain HTTP to the HTTPS port');

    const anonymous = await httpsGet(metricsPort, '/metrics');
    assert.equal(anonymous.status, 401, anonymous.body);
    assert.match(anonymous.body, /send a bearer token/);
    assert.match(String(anonymous.headers['www-authenticate']), /^Bearer/);
    assert.deepEqual(
      anonymous.certificate?.subjectaltname?.split(', '),
      ['DNS:localhost', 'IP Address:127.0.0.1'],
      'a self-signed certificate for localhost',
    );
    assert.equal((await httpsGet(metricsPort, '/metrics', 'not-a-token')).status, 401);

    const stranger = await httpsGet(metricsPort, '/metrics', strangerToken);
    assert.equal(stranger.status, 403, stranger.body);
    assert.match(stranger.body, new RegExp(`user system:serviceaccount:${namespace}:stranger may not get /metrics`));
    assert.doesNotMatch(stranger.body, /controller_runtime/);

    // The first scrape asks the API server (a TokenReview, a SubjectAccessReview); later ones hit the cache.
    const started = performance.now();
    const first = await httpsGet(metricsPort, '/metrics', prometheusToken);
    const firstMs = performance.now() - started;
    assert.equal(first.status, 200, first.body);
    assert.match(String(first.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(first.body);
    assert.notEqual(
      valueOf(samples, 'controller_runtime_reconcile_total', { controller: 'metrics-auth-test', result: 'success' }),
      undefined,
    );
    const cachedMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const begin = performance.now();
      assert.equal((await httpsGet(metricsPort, '/metrics', prometheusToken)).status, 200);
      cachedMs.push(performance.now() - begin);
    }
    cachedMs.sort((a, b) => a - b);
    t.diagnostic(
      `scrape over HTTPS: first (reviews asked) ${firstMs.toFixed(1)} ms, cached median ${cachedMs[10]!.toFixed(1)} ms`,
    );

    // Path tricks reach no route, and cost no review.
    const reviewsBefore = tokenReviews.all;
    for (const path of ['//metrics', '/%6detrics', '/metrics;x', '/metrics/', '/METRICS', '/./metrics']) {
      const tricked = await httpsGet(metricsPort, path, `${path}-token`);
      assert.equal(tricked.status, 404, path);
      assert.doesNotMatch(tricked.body, /controller_runtime/, path);
    }
    assert.equal(tokenReviews.all, reviewsBefore, 'no TokenReview for a path that is not served');

    // 2,000 requests with made-up tokens over 16 connections, a scrape every 20 ms meanwhile:
    // the flood gets a bounded number of TokenReviews and 429s, the scraper its metrics.
    const floodAgent = new Agent({ keepAlive: true, maxSockets: 16, rejectUnauthorized: false });
    const [reviewsAtStart, scraperReviewsAtStart] = [tokenReviews.all, tokenReviews.scraper];
    const floodStarted = performance.now();
    let flooding = true;
    const flood = Promise.all(
      Array.from({ length: 2_000 }, () =>
        httpsGet(metricsPort, '/metrics', randomBytes(24).toString('base64url'), floodAgent),
      ),
    ).finally(() => (flooding = false));
    const scrapes: number[] = [];
    while (flooding) {
      scrapes.push((await httpsGet(metricsPort, '/metrics', prometheusToken)).status);
      await sleep(20);
    }
    const floodReplies = await flood;
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    floodAgent.destroy();
    const statuses: Record<number, number> = {};
    for (const reply of floodReplies) statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
    const floodReviews = tokenReviews.all - reviewsAtStart;
    t.diagnostic(
      `flood of 2,000 made-up tokens in ${floodSeconds.toFixed(2)} s: ${floodReviews} TokenReviews, ` +
        `answers ${JSON.stringify(statuses)}; ${scrapes.length} scrapes meanwhile`,
    );
    assert.deepEqual(Object.keys(statuses).sort(), ['401', '429'], JSON.stringify(statuses));
    // The limit's bound (burst 20, 10 a second) over the flood's duration.
    assert.ok(floodReviews <= 20 + Math.ceil(10 * floodSeconds), `${floodReviews} TokenReviews in ${floodSeconds} s`);
    const limited = floodReplies.filter((reply) => reply.status === 429);
    assert.ok(limited.length >= 1_000, `${limited.length} answered 429`);
    for (const reply of limited) assert.match(String(reply.headers['retry-after']), /^[1-9]\d*$/);
    assert.match(limited[0]!.body, /^Too Many Requests/);
    assert.ok(scrapes.length >= 2, `${scrapes.length} scrapes during the flood`);
    assert.deepEqual(new Set(scrapes), new Set([200]), 'the scraper kept getting its metrics');
    // Its approval stayed cached (reviewed again at most once, should it expire meanwhile).
    assert.ok(
      tokenReviews.scraper - scraperReviewsAtStart <= 1,
      `${tokenReviews.scraper} reviews of the scraper's token`,
    );

    // Probes: plain HTTP, no token, nothing internal.
    assert.deepEqual(await httpGet(healthPort, '/readyz'), { status: 200, body: 'ok\n' });
    assert.deepEqual(await httpGet(healthPort, '/healthz'), { status: 200, body: 'ok\n' });
    const verbose = await httpGet(healthPort, '/readyz?verbose');
    assert.equal(
      verbose.body,
      '[+]manager ok\n[+]apiserver ok\n[+]controller:metrics-auth-test ok\n[+]informer:configmaps ok\nreadyz check passed\n',
    );

    await apps.splice(apps.indexOf(app), 1)[0]!.close();
    await assert.rejects(httpsGet(metricsPort, '/metrics', prometheusToken), 'the metrics port is closed');
  });
});
