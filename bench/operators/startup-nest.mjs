#!/usr/bin/env node
// Start-up milestones of a Nest application with OperatorModule, for bench/startup.mjs: a
// @Controller(Widget, { owns: [ConfigMap] }) with a @Reconcile() method, metrics (HTTPS,
// authenticated) and probes served as in production. It prints, one JSON line each on
// stdout, with `at` on the wall clock (microseconds, comparable with the parent's):
//   imported (modules loaded), nest (the application's
//   modules initialised: its providers' onApplicationBootstrap, before the operator's, which
//   runs last), first-object (the first object of a LIST decoded into a cache), synced
//   (OperatorModule started the manager and its caches synced: the application context is
//   created), reconcile (the first reconcile starts). The parent polls /readyz itself.
//   node bench/operators/startup-nest.mjs --kubeconfig F --namespace NS --health-port P
// Decorators are applied by hand (this file is JavaScript); the result is what TypeScript emits.
import 'reflect-metadata';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WIDGETS, nowUs } from '../lib/common.mjs';
import { args, fail, send } from './protocol.mjs';

const dist = process.env.NESTOR_OPERATOR_DIST;
const { ConfigMap, Controller, InformerCache, OperatorModule, Reconcile } = await import(
  dist ? pathToFileURL(`${dist}/index.js`).href : '@nestor/operator'
);
send({ ev: 'imported', at: nowUs() });

const { kubeconfig, namespace } = args();

let reconciled = false;
class WidgetController {
  async reconcile() {
    if (reconciled) return;
    reconciled = true;
    send({ ev: 'reconcile', at: nowUs() });
  }
}
Reflect.decorate(
  [Reconcile()],
  WidgetController.prototype,
  'reconcile',
  Object.getOwnPropertyDescriptor(WidgetController.prototype, 'reconcile'),
);
Reflect.decorate([Controller(WIDGETS, { owns: [ConfigMap] })], WidgetController);

/** The application's own provider: its bootstrap hook runs once Nest has built the modules, before the operator's. */
class Milestones {
  constructor(informers) {
    this.informers = informers;
  }

  onApplicationBootstrap() {
    send({ ev: 'nest', at: nowUs() });
    // The first object any informer receives (the manager acquires them after this hook).
    const acquire = this.informers.acquire.bind(this.informers);
    let seen = false;
    this.informers.acquire = (...rest) => {
      const handle = acquire(...rest);
      const subscription = handle.informer.events$.subscribe(() => {
        subscription.unsubscribe();
        if (seen) return;
        seen = true;
        send({ ev: 'first-object', at: nowUs() });
      });
      return handle;
    };
  }
}
Reflect.defineMetadata('design:paramtypes', [InformerCache], Milestones);

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const health = Number(args()['health-port']) || (await freePort());
class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        OperatorModule.forRoot({
          kubeConfig: kubeconfig,
          namespace,
          metrics: { host: '127.0.0.1', port: await freePort() },
          health: { host: '127.0.0.1', port: health },
        }),
      ],
      providers: [WidgetController, Milestones],
    }),
  ],
  AppModule,
);

// Nest's logs go to stderr: stdout carries the protocol only.
const verbose = Boolean(process.env.NESTOR_LOG);
const logger = {
  log: verbose ? (message) => process.stderr.write(`${new Date().toISOString()} LOG ${message}\n`) : () => {},
  debug: () => {},
  verbose: () => {},
  warn: (message) => process.stderr.write(`${new Date().toISOString()} WARN ${message}\n`),
  error: (message, trace) => process.stderr.write(`ERROR ${message}${trace ? `\n${trace}` : ''}\n`),
};

let app;
try {
  app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
} catch (error) {
  fail(error);
}
send({ ev: 'synced', at: nowUs() });
app.enableShutdownHooks();
