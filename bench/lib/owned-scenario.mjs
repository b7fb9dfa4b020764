// The owned scenario (bench/run.mjs --scenarios owned): what an operator holds for the
// children it owns but never reads. N ConfigMaps (~1 KiB each) exist, each with a controller
// owner reference to one of OWNERS Widgets; the operator reconciles Widgets and owns
// ConfigMaps (`owns: [ConfigMap]`, controller-runtime's `.Owns(&corev1.ConfigMap{})`), its
// reconcile applies one child and patches the status, and reads no ConfigMap. Measured: RSS
// IDLE_MS after the operator said ready (its caches synced, the Widgets reconciled), its peak
// RSS, and its CPU from spawn to then; then its heap after a full GC (what it keeps).
import { parallel } from '@nestor/testing';
import { processCpuSeconds, processMemory } from './child.mjs';
import { GROUP, PAYLOAD, VERSION, configMapsPath, sleep, widgetsPath } from './common.mjs';

/** Widgets owning the ConfigMaps (each owns N / OWNERS of them, and the child its reconcile applies). */
export const OWNERS = 100;
/** How long the operator runs after ready before its RSS is read (the table: 20 s). */
export const IDLE_MS = 20_000;

function ownedConfigMap(name, owner) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      labels: { app: 'bench' },
      ownerReferences: [
        {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'Widget',
          name: owner.metadata.name,
          uid: owner.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { payload: PAYLOAD },
  };
}

/**
 * @param context { env, load, config, doc, log, overBudget, settle, startOperator, rotated, emptyNamespace, repsFor }
 */
export async function scenarioOwned(context) {
  const { env, load, config, doc, log, overBudget, settle, startOperator, rotated, emptyNamespace } = context;
  for (const size of config.ownedSizes) {
    if (overBudget()) {
      doc.skipped.push(`owned ${size}: over the time budget`);
      continue;
    }
    const ns = await env.createNamespace('owned');
    try {
      const owners = [];
      for (let i = 0; i < OWNERS; i++) {
        const body = {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'Widget',
          metadata: { name: `owner-${i}`, namespace: ns },
          spec: { size: 1, round: 0 },
        };
        owners.push(await load.json('POST', widgetsPath(ns), { body }));
      }
      log(`owned: creating ${size} ConfigMaps owned by ${OWNERS} Widgets`);
      const t = Date.now();
      const names = Array.from({ length: size }, (_, i) => `owned-${i}`);
      await parallel(names, config.createConcurrency, (name, i) =>
        load.json('POST', configMapsPath(ns), { body: ownedConfigMap(name, owners[i % OWNERS]) }),
      );
      log(`owned: ${size} created in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      for (let rep = 0; rep < config.smallReps; rep++) {
        for (const impl of rotated(rep)) {
          if (impl === 'apiserver' || impl === 'client-node') continue; // no owner mapping of their own
          const what = `owned ${size} ${impl}`;
          if (overBudget()) {
            doc.skipped.push(`${what} rep ${rep + 1}: over the time budget`);
            continue;
          }
          let op;
          try {
            await settle();
            op = await startOperator(impl, ns, 'reconcile', undefined, ['--owns', 'configmap']);
            const ready = await op.next('ready', 600_000);
            const all = op.next('all', 120_000);
            op.send({ cmd: 'expect', n: OWNERS });
            await all;
            await sleep(IDLE_MS);
            const memory = processMemory(op.pid);
            const cpuSeconds = processCpuSeconds(op.pid);
            // Then what the heap holds once the garbage is collected: what the cache keeps.
            const stats = await op.ask({ cmd: 'stats', gc: true, lite: true }, 'stats');
            const run = {
              impl,
              size,
              rep: rep + 1,
              startupMs: ready.startupMs,
              rssMB: memory.rss / 2 ** 20,
              maxRssMB: memory.maxRss / 2 ** 20,
              anonMB: memory.anon / 2 ** 20,
              fileMB: memory.file / 2 ** 20,
              cpuSeconds,
              heapAfterGcMB: stats.heap / 2 ** 20,
            };
            doc.runs.owned.push(run);
            log(
              `${what}: RSS ${run.rssMB.toFixed(1)} MB ${IDLE_MS / 1000} s after ready (anonymous ${run.anonMB.toFixed(1)}, ` +
                `file-backed ${run.fileMB.toFixed(1)}; peak ${run.maxRssMB.toFixed(0)}), ` +
                `CPU ${run.cpuSeconds.toFixed(2)} s since spawn, heap after GC ${run.heapAfterGcMB.toFixed(1)} MB`,
            );
          } catch (error) {
            log(`${what} failed: ${error.message}`);
            doc.skipped.push(`${what} rep ${rep + 1}: ${error.message.split('\n')[0]}`);
          } finally {
            await op?.stop();
          }
        }
      }
    } finally {
      await emptyNamespace(ns);
    }
  }
}
