#!/usr/bin/env node
// The operator under test written as users write it: a Nest application context importing
// OperatorModule, a @Controller(Widget) class with an injected KubeClient and a @Reconcile()
// method, metrics (HTTPS, authenticated) and probes served as in production. Beside
// bench/operators/nestor.mjs (the runtime alone) it shows what Nest costs. Driven by bench/run.mjs.
//   node --expose-gc bench/operators/nestor-nest.mjs --kubeconfig F --namespace NS --mode sync|reconcile [--workers 8]
//     [--sync-kind configmap|widget]
// Decorators are applied by hand (this file is JavaScript); the result is what TypeScript emits.
import 'reflect-metadata';
import { createServer } from 'node:net';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FIELD_MANAGER, WIDGETS, WRITTEN_AT, childConfigMap, nowUs, statusFor } from '../lib/common.mjs';
import { Recorder, args, fail, onCommands, onSyncCommands, send } from './protocol.mjs';

const { ConfigMap, Controller, InformerCache, KubeClient, OperatorModule, Reconcile, generationChanged } =
  await import('@nestor/operator');
/** Start-up phases (ms since process start): modules loaded, then the application bootstrapped. */
const importedMs = performance.now();

const { kubeconfig, namespace, mode, workers, 'sync-kind': syncKind = 'configmap', owns } = args();
const recorder = new Recorder();

class WidgetController {
  constructor(kube) {
    this.kube = kube;
  }

  async reconcile(widget) {
    const key = `${widget.metadata.namespace}/${widget.metadata.name}`;
    recorder.start(key, widget.metadata.annotations?.[WRITTEN_AT]);
    let ok = false;
    try {
      await this.kube.apply(childConfigMap(widget, { ownerReference: false }), { owner: widget });
      await this.kube.patchStatus(widget, statusFor(widget));
      ok = true;
    } finally {
      recorder.finish(key, ok);
    }
  }
}
Reflect.decorate(
  [Reconcile()],
  WidgetController.prototype,
  'reconcile',
  Object.getOwnPropertyDescriptor(WidgetController.prototype, 'reconcile'),
);
Reflect.defineMetadata('design:paramtypes', [KubeClient], WidgetController);
Reflect.decorate(
  [
    Controller(WIDGETS, {
      predicates: [generationChanged],
      maxConcurrentReconciles: workers,
      // --owns configmap (bench/run.mjs --scenarios owned): owned, never read by the reconcile.
      ...(owns === 'configmap' ? { owns: [ConfigMap] } : {}),
    }),
  ],
  WidgetController,
);

/** A free port on 127.0.0.1 for the metrics and probe servers (several bench runs may share the machine). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        OperatorModule.forRoot({
          kubeConfig: kubeconfig,
          namespace,
          concurrency: workers,
          fieldManager: FIELD_MANAGER,
          metrics: { host: '127.0.0.1', port: await freePort() },
          health: { host: '127.0.0.1', port: await freePort() },
        }),
      ],
      providers: mode === 'sync' ? [] : [WidgetController],
    }),
  ],
  AppModule,
);

// Nest's logs go to stderr: stdout carries the protocol only.
const logger = {
  log: () => {},
  debug: () => {},
  verbose: () => {},
  warn: (message) => process.stderr.write(`WARN ${message}\n`),
  error: (message, trace) => process.stderr.write(`ERROR ${message}${trace ? `\n${trace}` : ''}\n`),
};

let app;
try {
  app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
} catch (error) {
  fail(error);
}
send({ ev: 'hello', pid: process.pid, runtime: process.version });

if (mode === 'sync') {
  // The application is up with nothing cached: `before` is what Node, Nest and Nestor cost.
  onSyncCommands(async () => {
    const { informer } = app.get(InformerCache).acquire(syncKind === 'widget' ? WIDGETS : ConfigMap, { namespace });
    await informer.whenSynced();
    return () => ({ objects: informer.size });
  });
} else {
  // OperatorLifecycle started the manager during bootstrap and waited for its caches.
  send({ ev: 'ready', at: nowUs(), startupMs: performance.now(), importedMs });
  onCommands((command) => recorder.command(command));
}
