// What every attack of the suite (bench/attack.mjs) shares: a fresh webhook server per case
// (Nestor's WebhookServer in a Nest app, bench/webhooks/nestor-nest.mjs, or the
// controller-runtime peer, bench/controller-runtime), the legitimate client beside the
// attack (legit-client.mjs), the server's RSS sampled from /proc every 100 ms, and, for
// Nestor, the longest event-loop stall it saw (bench/webhooks/protocol.mjs).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { certificateAuthority, selfSignedCertificate } from '@nestor/core';
import { freePort } from '@nestor/testing';
import { benchWidget } from '../admission-load.mjs';
import { OperatorProcess, processMemory } from '../child.mjs';
import { sleep } from '../common.mjs';
import { VALIDATE_PATH } from '../../webhooks/rule.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const HOST = '127.0.0.1';
/**
 * The legitimate client's source address: another loopback address, so a server that bounds
 * each client's share (by remote address) tells it from the attacker, who connects from HOST,
 * as it tells the API server from a pod.
 */
export const LEGIT_ADDRESS = '127.0.0.2';
export const MB = 2 ** 20;
export { VALIDATE_PATH };
export const MUTATE_PATH = '/mutate-bench-nestor-dev-v1-widget';
export const CONVERT_PATH = '/convert';
export const CONVERSION_GROUP = 'conversion.bench.nestor.dev';
/** Every implementation the suite attacks, with how to start it. */
export const IMPLS = ['nestor', 'controller-runtime'];
export const LEGIT_INTERVAL_MS = 100;
/** The legitimate client runs at least this long, however short the attack. */
const MIN_WINDOW_MS = 3_000;

/**
 * A CA, a serving certificate for 127.0.0.1 and a kubeconfig that points nowhere (the
 * webhook server needs no API server; the Nest app wants a kubeconfig) in a temporary directory.
 */
export async function attackFixtures() {
  const ca = certificateAuthority({ commonName: 'nestor-bench-attack-ca' });
  const { cert, key } = selfSignedCertificate({ hosts: [HOST], issuer: ca });
  const dir = await mkdtemp(join(tmpdir(), 'nestor-bench-attack-'));
  await writeFile(join(dir, 'tls.crt'), cert);
  await writeFile(join(dir, 'tls.key'), key, { mode: 0o600 });
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: none, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]',
      'users: [{name: none, user: {token: none}}]',
      'contexts: [{name: none, context: {cluster: none, user: none, namespace: default}}]',
      'current-context: none',
      '',
    ].join('\n'),
  );
  return { certDir: dir, ca: ca.cert, kubeconfig, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Starts one webhook server; resolves with { peer, port, pid }. */
export async function startServer(impl, { fixtures, goBinary, http2 = false, nodeFlags = [] }) {
  const port = await freePort();
  const peer = await OperatorProcess.start(impl === 'nestor' ? 'nestor-nest' : impl, {
    kubeconfig: fixtures.kubeconfig,
    namespace: 'default',
    mode: 'webhook',
    goBinary,
    nodeFlags,
    ...(impl === 'nestor' ? { script: join(here, '..', '..', 'webhooks', 'nestor-nest.mjs') } : {}),
    // -http2 last: Go's flag package stops at the "true" that follows a bool flag.
    extraArgs: [
      '--cert-dir',
      fixtures.certDir,
      '--port',
      String(port),
      '--host',
      HOST,
      ...(http2 ? ['--http2', 'true'] : []),
    ],
  });
  await peer.next('ready', 120_000);
  return { peer, port, pid: peer.pid };
}

/** Samples a process's RSS every 100 ms; stop() gives the peak (and VmHWM, the kernel's own peak). */
export function rssSampler(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    const { rss } = processMemory(pid);
    if (rss > peak) peak = rss;
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      const { rss, maxRss } = processMemory(pid);
      return { peakRss: Math.max(peak, rss || 0), hwm: maxRss, endRss: rss };
    },
  };
}

/** The legitimate client (a worker thread); stop(drainMs) resolves with its numbers. */
export function legitClient({ port, ca }) {
  const worker = new Worker(join(here, 'legit-client.mjs'), {
    workerData: {
      host: HOST,
      port,
      ca,
      path: VALIDATE_PATH,
      intervalMs: LEGIT_INTERVAL_MS,
      localAddress: LEGIT_ADDRESS,
    },
  });
  const result = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop(drainMs) {
      worker.postMessage({ cmd: 'stop', drainMs });
      return result;
    },
  };
}

/**
 * One request on its own connection (HTTP/1.1, TLS), bounded by `timeoutMs`: resolves with
 * { status, body (text, at most 16 MiB kept), ms } or { error, ms } (timedOut when it ran out).
 */
export function post(port, ca, path, body, { timeoutMs = 60_000, headers = {} } = {}) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: HOST,
        port,
        ca,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks = [];
        let kept = 0;
        res.on('data', (chunk) => {
          if (kept < 16 * MB) chunks.push(chunk);
          kept += chunk.length;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', (error) => resolve({ error: error.message, ms: performance.now() - started }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ error: `no answer within ${timeoutMs / 1000} s`, timedOut: true, ms: performance.now() - started });
    }, timeoutMs);
    req.on('error', (error) => resolve({ error: error.message, ms: performance.now() - started }));
    req.on('close', () => clearTimeout(timer));
    req.end(body);
  });
}

/** A short text for an answer: "200 allowed", "400 <message>", "no answer within 60 s". */
export function describeAnswer(answer) {
  if (answer.error) return answer.error;
  let text = `${answer.status}`;
  try {
    const { response } = JSON.parse(answer.body);
    if (response?.allowed !== undefined) {
      text += response.allowed
        ? ' allowed'
        : ` denied (${response.status?.code ?? ''} ${clip(response.status?.message)})`;
    } else if (response?.result) {
      text += ` ${response.result.status}${response.result.message ? ` (${clip(response.result.message)})` : ''}`;
    }
  } catch {
    text += ` ${clip(answer.body.trim())}`;
  }
  return `${text} in ${seconds(answer.ms)}`;
}

export const clip = (text = '', n = 90) => (text.length > n ? `${text.slice(0, n)}…` : text);
export const seconds = (ms) => (ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** An AdmissionReview of a Widget, CREATE or UPDATE, with `edit(object)` applied to its object. */
export function admissionReview({ operation = 'CREATE', edit = () => {} } = {}) {
  const object = benchWidget({ name: 'widget-attack', round: 8 });
  edit(object);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'bench.nestor.dev', version: 'v1', kind: 'Widget' },
      resource: { group: 'bench.nestor.dev', version: 'v1', resource: 'widgets' },
      name: 'widget-attack',
      namespace: 'bench',
      operation,
      userInfo: { username: 'system:serviceaccount:bench:attacker', groups: ['system:authenticated'] },
      object,
      ...(operation === 'UPDATE' ? { oldObject: benchWidget({ name: 'widget-attack', round: 7 }) } : {}),
      dryRun: false,
    },
  };
}

/** A ConversionReview of `objects` to `desiredAPIVersion`. */
export function conversionReview(objects, desiredAPIVersion) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: randomUUID(), desiredAPIVersion, objects },
  };
}

/** A Widget of conversion.bench.nestor.dev at `version` with `spec` and annotations. */
export function conversionWidget(version, spec, annotations) {
  return {
    apiVersion: `${CONVERSION_GROUP}/${version}`,
    kind: 'Widget',
    metadata: {
      name: 'widget-attack',
      namespace: 'bench',
      uid: '7a1c7a52-9d8e-4f4b-9a51-3c2d7e1b0a44',
      resourceVersion: '1234',
      ...(annotations ? { annotations } : {}),
    },
    spec,
  };
}

/**
 * Runs one case against one implementation: a fresh server, the legitimate client and the
 * RSS sampler around `attack(target)` (which must bound itself in time), then the server's
 * longest event-loop stall and the legitimate client's numbers.
 */
export async function runCase(impl, attackCase, { fixtures, goBinary, quick, log, nodeFlags }) {
  const { peer, port, pid } = await startServer(impl, { fixtures, goBinary, http2: attackCase.http2, nodeFlags });
  const target = { impl, port, pid, ca: fixtures.ca, quick, log, peer };
  try {
    await sleep(500);
    const idle = processMemory(pid);
    await peer.ask({ cmd: 'stats', resetLoop: true }, 'stats').catch(() => {});
    const sampler = rssSampler(pid);
    const legit = legitClient({ port, ca: fixtures.ca });
    const started = performance.now();
    let outcome;
    try {
      outcome = await attackCase.run(target);
    } catch (error) {
      outcome = { summary: `the attack failed: ${error.message}`, error: error.message };
    }
    const attackMs = performance.now() - started;
    // A short attack still gets a few legitimate reviews beside it.
    await sleep(Math.max(0, MIN_WINDOW_MS - attackMs));
    const legitResult = await legit.stop(quick ? 3_000 : 10_000);
    const memory = sampler.stop();
    // A server still stuck answers nothing: its stall is at least the legit client's longest wait.
    const stats = await peer.ask({ cmd: 'stats' }, 'stats', 5_000).catch(() => undefined);
    const alive = peer.exitCode === undefined;
    return {
      impl,
      attack: attackCase.attack,
      case: attackCase.id,
      title: attackCase.title,
      attackSeconds: attackMs / 1000,
      idleRssMB: idle.rss / MB,
      peakRssMB: memory.peakRss / MB,
      hwmMB: memory.hwm / MB,
      endRssMB: memory.endRss / MB,
      loopMaxMs: stats?.loopMaxMs ?? null,
      // Still stuck when asked: the stall lasted at least as long as the longest legitimate wait.
      loopStallAtLeastMs: impl === 'nestor' && !stats ? legitResult.maxMs : null,
      serverResponsive: Boolean(stats),
      serverAlive: alive,
      legit: legitResult,
      // When the slowest legitimate review was due, from the attack's start (to set beside the attack's own times).
      legitSlowestDueMs: legitResult.startedAtMs + legitResult.slowestAnsweredAtMs - (performance.timeOrigin + started),
      ...outcome,
    };
  } finally {
    await peer.stop(2_000);
  }
}
