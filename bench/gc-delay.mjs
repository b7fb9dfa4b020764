#!/usr/bin/env node
// The garbage collector's delay for a custom kind (docs/testing.md): on a control plane of its
// own per round, a ConfigMap owned by a Widget, the Widget deleted, the time until the
// ConfigMap is gone; with the Widget CRD installed
//   before: by TestEnvironment.start({ crds }), before kube-controller-manager starts;
//   after:  by env.installCRDs() once the garbage collector is running (as a test file does
//           on the shared control plane, or an operator with installCustomResources).
//
//   node bench/gc-delay.mjs [--rounds 3]
//
// Prints one JSON line per round and the minimum, median and maximum of each case.
// Never part of `npm test`.
import { parseArgs } from 'node:util';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { WIDGET_CRD, GROUP, VERSION } from './lib/common.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const widgets = `/apis/${GROUP}/${VERSION}/namespaces/default/widgets`;
const configMaps = '/api/v1/namespaces/default/configmaps';

const gone = async (env, path) => (await env.client.raw('GET', path)).status === 404;

/** Owner deleted to dependent gone, in ms. */
async function collect(env, ownerPath, ownerBody, apiVersion, kind, dependentName) {
  const owner = await env.client.request('POST', ownerPath, ownerBody);
  await env.client.request('POST', configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: dependentName,
      ownerReferences: [{ apiVersion, kind, name: owner.metadata.name, uid: owner.metadata.uid }],
    },
  });
  const deleted = performance.now();
  await env.client.request('DELETE', `${ownerPath}/${owner.metadata.name}`);
  await waitFor(() => gone(env, `${configMaps}/${dependentName}`), {
    timeoutMs: 120_000,
    intervalMs: 100,
    what: `${dependentName} to be collected`,
  });
  return Math.round(performance.now() - deleted);
}

async function round(installed) {
  const env = await TestEnvironment.start({
    useExistingCluster: false,
    controllerManager: true,
    ...(installed === 'before' ? { crds: [WIDGET_CRD] } : {}),
  });
  try {
    if (installed === 'after') {
      // The collector is running: it has collected a ConfigMap owned by a ConfigMap.
      await collect(env, configMaps, { metadata: { name: 'warm-owner' } }, 'v1', 'ConfigMap', 'warm');
      await env.installCRDs([WIDGET_CRD]);
    }
    const body = { apiVersion: `${GROUP}/${VERSION}`, kind: 'Widget', metadata: { name: 'owner' } };
    return await collect(env, widgets, body, `${GROUP}/${VERSION}`, 'Widget', 'owned');
  } finally {
    await env.stop();
  }
}

const results = { before: [], after: [] };
for (let i = 0; i < rounds; i++) {
  for (const installed of ['before', 'after']) {
    const ms = await round(installed);
    results[installed].push(ms);
    console.log(JSON.stringify({ round: i + 1, installed, collectedMs: ms }));
  }
}
for (const [installed, list] of Object.entries(results)) {
  const sorted = [...list].sort((a, b) => a - b);
  console.log(
    `CRD installed ${installed} kube-controller-manager started: min ${sorted[0]} ms, median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms (${rounds} rounds)`,
  );
}
