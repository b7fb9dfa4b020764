#!/usr/bin/env node
// Nestor's webhook handlers without HTTP: CPU per admission review (parse the body, validate,
// serialize the answer) and per ConversionReview of one Widget v1 -> v2 (what the API server
// sends per object when it reads a LIST from etcd), the same bodies as bench/run.mjs --mode
// webhooks. Shows how much of a webhook server's CPU is Nestor's and how much is HTTP/TLS.
//   npm run build && node bench/micro/webhook-handlers.mjs [reviews=50000]
import { randomUUID } from 'node:crypto';
import { AdmissionDenied } from '../../packages/operator/dist/webhooks/admission-denied.js';
import { validate } from '../../packages/operator/dist/webhooks/admission-handler.js';
import {
  admissionReviewResponse,
  parseAdmissionReview,
} from '../../packages/operator/dist/webhooks/admission-review.js';
import { ConversionWebhook } from '../../packages/operator/dist/webhooks/conversion-webhook.js';
import { HubSpokeConverter } from '../../packages/operator/dist/webhooks/hub-spoke-converter.js';
import { benchWidget, updateReviewTemplate } from '../lib/admission-load.mjs';
import { CONVERSION_GROUP, spokeV2 } from '../webhooks/conversion.mjs';
import { widgetRule } from '../webhooks/rule.mjs';

const n = Number(process.argv[2] ?? 50_000);
const template = updateReviewTemplate();
const handlers = widgetRule(AdmissionDenied);
const bodies = Array.from({ length: 1000 }, () => template.body(randomUUID()));

async function admission(count) {
  for (let i = 0; i < count; i++) {
    const review = parseAdmissionReview(bodies[i % bodies.length]);
    const response = await validate(handlers, review.request);
    JSON.stringify(admissionReviewResponse(review, response));
  }
}

const stored = benchWidget({ group: CONVERSION_GROUP });
stored.spec.description = 'd'.repeat(640);
const conversionBody = (keepLostData) => ({
  webhook: new ConversionWebhook([
    new HubSpokeConverter({
      group: CONVERSION_GROUP,
      kind: 'Widget',
      hub: 'v1',
      spokes: { v2: spokeV2 },
      keepLostData,
    }),
  ]),
  body: JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: randomUUID(), desiredAPIVersion: `${CONVERSION_GROUP}/v2`, objects: [stored] },
  }),
});

async function conversion(count, { webhook, body }) {
  for (let i = 0; i < count; i++) JSON.stringify(await webhook.review(body));
}

async function measure(label, run) {
  await run(Math.min(5000, n)); // warm-up
  const cpu = process.cpuUsage();
  await run(n);
  const { user, system } = process.cpuUsage(cpu);
  console.log(`${label}: ${((user + system) / n).toFixed(1)} µs of CPU per review`);
}

console.log(`admission body ${template.bytes} B (object ${template.objectBytes} B); ${n} reviews each`);
await measure('admission: parse + validate + answer', admission);
await measure('conversion of 1 Widget, keepLostData on (default)', (c) => conversion(c, conversionBody(true)));
await measure('conversion of 1 Widget, keepLostData off', (c) => conversion(c, conversionBody(false)));
