#!/usr/bin/env node
// The webhook routed through Nest's own HTTP stack instead of Nestor's WebhookServer: a Nest
// HTTPS application on @nestjs/platform-express (Nest's default adapter) with an HTTP
// @Controller whose POST route takes the AdmissionReview as @Body() (Express's JSON parser,
// the 7 MiB limit of WebhookServer), runs the same validate() and answers the review. What
// `webhooks` would cost if it were served "through Nest's HTTP stack"; admission only.
// Driven by bench/lib/webhook-scenarios.mjs.
//   node bench/webhooks/nest-express.mjs --cert-dir DIR --port P [--host 127.0.0.1]
// Decorators are applied by hand (this file is JavaScript); the result is what TypeScript emits.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdmissionDenied } from '../../packages/operator/dist/webhooks/admission-denied.js';
import { validate } from '../../packages/operator/dist/webhooks/admission-handler.js';
import {
  admissionReviewResponse,
  parseAdmissionReview,
} from '../../packages/operator/dist/webhooks/admission-review.js';
import { args, counters, fail, send, serveCommands } from './protocol.mjs';
import { VALIDATE_PATH, widgetRule } from './rule.mjs';

const { 'cert-dir': certDir, port, host = '127.0.0.1' } = args();
const handlers = widgetRule(AdmissionDenied);

class WebhookController {
  async validate(body) {
    // Express parsed the JSON already; the envelope checks take the object as is.
    const review = parseAdmissionReview(body);
    const response = await validate(handlers, review.request, (error) => console.error(error));
    counters.reviews++;
    return admissionReviewResponse(review, response);
  }
}
Body()(WebhookController.prototype, 'validate', 0); // what TypeScript's __param(0, Body()) does
Reflect.decorate(
  [Post(VALIDATE_PATH), HttpCode(200)],
  WebhookController.prototype,
  'validate',
  Object.getOwnPropertyDescriptor(WebhookController.prototype, 'validate'),
);
Reflect.decorate([Controller()], WebhookController);

class AppModule {}
Reflect.decorate([Module({ controllers: [WebhookController] })], AppModule);

send({ ev: 'hello', pid: process.pid, runtime: process.version });
try {
  const app = await NestFactory.create(AppModule, {
    httpsOptions: { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) },
    logger: ['error', 'warn'],
    bodyParser: false,
  });
  app.useBodyParser('json', { limit: 7 * 1024 * 1024 });
  await app.listen(Number(port), host);
  app.getHttpServer().on('secureConnection', () => counters.connections++);
  send({ ev: 'ready', port: app.getHttpServer().address().port, paths: [VALIDATE_PATH] });
  serveCommands();
} catch (error) {
  fail(error);
}
