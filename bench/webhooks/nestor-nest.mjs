#!/usr/bin/env node
// The webhook peer written as users write it: a Nest application context importing
// OperatorModule, a @Webhook(Widget) class with @ValidateCreate/@ValidateUpdate methods,
// served by Nestor's WebhookServer (HTTPS, certificate from --cert-dir, watched for rotation),
// metrics and probes on as in production, and a @Default method (size 1 when unset, the attack
// suite's mutating path). Driven by bench/lib/webhook-scenarios.mjs and bench/attack.mjs.
//   node bench/webhooks/nestor-nest.mjs --kubeconfig F --cert-dir DIR --port P [--host 127.0.0.1] [--http2 true]
// Decorators are applied by hand (this file is JavaScript); the result is what TypeScript emits.
import 'reflect-metadata';
import { createServer } from 'node:net';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WIDGETS } from '../lib/common.mjs';
import { conversionProviders } from './conversion.mjs';
import { args, counters, fail, send, serveCommands } from './protocol.mjs';
import { widgetRule } from './rule.mjs';

const { AdmissionDenied, Default, OperatorModule, ValidateCreate, ValidateUpdate, Webhook } =
  await import('@nestor/operator');
const { kubeconfig, 'cert-dir': certDir, port, host = '127.0.0.1', http2 } = args();
const rule = widgetRule(AdmissionDenied);

class WidgetWebhook {
  create(widget) {
    counters.reviews++;
    return rule.create(widget);
  }

  update(widget, old) {
    counters.reviews++;
    return rule.update(widget, old);
  }

  // The Go peer's WidgetDefaulter does the same (bench/controller-runtime/webhook.go).
  default(widget) {
    counters.reviews++;
    widget.spec ??= {};
    if (!widget.spec.size) widget.spec.size = 1;
  }
}
for (const [method, decorator] of [
  ['create', ValidateCreate()],
  ['update', ValidateUpdate()],
  ['default', Default()],
]) {
  Reflect.decorate(
    [decorator],
    WidgetWebhook.prototype,
    method,
    Object.getOwnPropertyDescriptor(WidgetWebhook.prototype, method),
  );
}
Reflect.decorate([Webhook(WIDGETS, { failurePolicy: 'Fail', timeoutSeconds: 10 })], WidgetWebhook);

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: free } = server.address();
      server.close(() => resolve(free));
    });
  });

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        OperatorModule.forRoot({
          kubeConfig: kubeconfig,
          metrics: { host: '127.0.0.1', port: await freePort() },
          health: { host: '127.0.0.1', port: await freePort() },
          webhooks: { host, port: Number(port), certDir, http2: http2 === 'true' },
        }),
      ],
      providers: [WidgetWebhook, ...(await conversionProviders())],
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

send({ ev: 'hello', pid: process.pid, runtime: process.version });
try {
  const app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  const { WebhookServer } = await import('@nestor/operator');
  const server = app.get(WebhookServer);
  // TLS connections accepted (the listener is private to the serving layer's WebhookHttpsServer,
  // which WebhookServer binds; read for the bench only).
  server['server']?.['server']?.on('secureConnection', () => counters.connections++);
  send({ ev: 'ready', port: server.port, paths: server.paths });
  serveCommands();
} catch (error) {
  fail(error);
}
