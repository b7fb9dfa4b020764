#!/usr/bin/env node
// `npm run controlplane`: builds (once) and prints where the control-plane binaries are.
import { ensureControlPlaneBinaries } from './controlplane-binaries.js';

const quiet = process.argv.includes('--quiet');
try {
  const binaries = await ensureControlPlaneBinaries({ onProgress: (line) => console.error(`[controlplane] ${line}`) });
  if (!quiet) {
    console.log(`control plane (${binaries.origin}):`);
    console.log(`  kube-apiserver           ${binaries.kubeApiServer}`);
    console.log(`  kube-controller-manager  ${binaries.kubeControllerManager ?? '(none)'}`);
    console.log(`  etcd                     ${binaries.etcd}`);
  }
} catch (error) {
  console.error(`[controlplane] ${(error as Error).message}`);
  process.exitCode = 1;
}
