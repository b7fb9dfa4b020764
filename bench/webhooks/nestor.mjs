#!/usr/bin/env node
// The webhook peer without Nest: Nestor's admission handler (webhooks/: parseAdmissionReview,
// validate, admissionReviewResponse) behind a plain node:https server with the certificate
// from --cert-dir. Beside bench/webhooks/nestor-nest.mjs (the same rule as a @Webhook class
// served by Nestor's WebhookServer) it shows what the Nest layer costs. Driven by
// bench/lib/webhook-scenarios.mjs.
//   node bench/webhooks/nestor.mjs --cert-dir DIR --port P [--host 127.0.0.1]
// The webhooks/ layer loads no Nest, but the package exports it from its root only (which
// does): imported here from the build's files.
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { URLSearchParams } from 'node:url';
import { AdmissionDenied } from '../../packages/operator/dist/webhooks/admission-denied.js';
import { validate } from '../../packages/operator/dist/webhooks/admission-handler.js';
import {
  admissionReviewResponse,
  MalformedReviewError,
  parseAdmissionReview,
} from '../../packages/operator/dist/webhooks/admission-review.js';
import { conversionRoute } from './conversion.mjs';
import { args, counters, fail, send, serveCommands } from './protocol.mjs';
import { VALIDATE_PATH, widgetRule } from './rule.mjs';

const { 'cert-dir': certDir, port, host = '127.0.0.1', http2 } = args();
const handlers = widgetRule(AdmissionDenied);

async function admit(body, res) {
  try {
    const review = parseAdmissionReview(body);
    const response = await validate(handlers, review.request, (error) => console.error(error));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(admissionReviewResponse(review, response)));
    counters.reviews++;
  } catch (error) {
    const status = error instanceof MalformedReviewError ? 400 : 500;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`${error.message}\n`);
  }
}

const routes = new Map([
  [VALIDATE_PATH, admit],
  ['/convert', await conversionRoute()],
]);

// --http2 true: HTTP/2 offered by ALPN (HTTP/1.1 still served), an experiment; Nestor's WebhookServer is HTTP/1.1.
const serve = http2 === 'true' ? createSecureServer : createServer;
const server = serve(
  { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')), allowHTTP1: true },
  (req, res) => {
    const [path, search = ''] = (req.url ?? '/').split('?');
    const route = routes.get(path);
    if (!route || req.method !== 'POST') return res.writeHead(404).end();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => void route(Buffer.concat(chunks).toString('utf8'), res, new URLSearchParams(search)));
  },
);
server.on('error', fail);
// TLS connections accepted: whether the caller keeps them alive.
server.on('secureConnection', () => counters.connections++);
send({ ev: 'hello', pid: process.pid, runtime: process.version });
server.listen(Number(port), host, () => {
  send({ ev: 'ready', port: server.address().port, paths: [...routes.keys()] });
  serveCommands();
});
