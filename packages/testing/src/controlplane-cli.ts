#!/usr/bin/env node
// `npm run controlplane`: fetches or builds (once) the control-plane binaries and prints
// where they are. --controller-manager: kube-controller-manager is needed too (a Go build);
// --nodes: kube-scheduler and kwok too, for fake nodes.
// --helm: helm too, for the chart tests of `nestor manifests --helm` (a Go build).
// --olm: operator-framework's bundle validators, for the tests of `nestor manifests --olm` (a Go build).
import { ensureControlPlaneBinaries } from './controlplane-binaries.js';
import { ensureHelm } from './helm-binary.js';
import { ensureOlmValidator } from './olm-validator.js';

const quiet = process.argv.includes('--quiet');
const controllerManager = process.argv.includes('--controller-manager');
const nodes = process.argv.includes('--nodes');
try {
  const binaries = await ensureControlPlaneBinaries({
    controllerManager,
    nodes,
    onProgress: (line) => console.error(`[controlplane] ${line}`),
  });
  if (!quiet) {
    console.log(`control plane (${binaries.origin}):`);
    console.log(`  kube-apiserver           ${binaries.kubeApiServer}`);
    console.log(`  kube-controller-manager  ${binaries.kubeControllerManager ?? '(none)'}`);
    if (binaries.kubeScheduler) console.log(`  kube-scheduler           ${binaries.kubeScheduler}`);
    console.log(`  etcd                     ${binaries.etcd}`);
    if (binaries.kwok) console.log(`  kwok                     ${binaries.kwok}`);
    if (binaries.kubectl) console.log(`  kubectl                  ${binaries.kubectl}`);
  }
  if (process.argv.includes('--helm')) {
    const helm = await ensureHelm({ onProgress: (line) => console.error(`[controlplane] ${line}`) });
    if (!quiet) console.log(`  helm                     ${helm}`);
  }
  if (process.argv.includes('--olm')) {
    const validator = await ensureOlmValidator({ onProgress: (line) => console.error(`[controlplane] ${line}`) });
    if (!quiet) console.log(`  olm-validate             ${validator}`);
  }
} catch (error) {
  console.error(`[controlplane] ${(error as Error).message}`);
  process.exitCode = 1;
}
