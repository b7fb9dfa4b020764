// The routes WebhookHttpsServer's validating(), mutating() and conversions() add, built when
// the server starts: the admission and conversion code loads only in an operator that serves
// a webhook (bench/floor.mjs, docs/BENCHMARKS.md "Floor").
import type { KubeObject, RuntimeLogger } from '@nestor/core';
import {
  mutate,
  validate,
  type DefaultingHandler,
  type HandlerFailure,
  type ValidationHandlers,
} from '../webhooks/admission-handler.js';
import {
  admissionRefusal,
  admissionReviewResponse,
  parseAdmissionReview,
  type AdmissionRequest,
  type AdmissionResponse,
} from '../webhooks/admission-review.js';
import { ConversionWebhook, conversionTimeoutMs, objectName } from '../webhooks/conversion-webhook.js';
import { conversionRefusal, type ConvertibleObject } from '../webhooks/conversion-review.js';
import type { HubSpokeConverter } from '../webhooks/hub-spoke-converter.js';
import type { WebhookHttpsServerOptions, WebhookRoute } from './webhook-server-options.js';

export function validatingRoute<T>(handlers: ValidationHandlers<T>, onFailure: HandlerFailure): WebhookRoute {
  return admission((request) => validate(handlers, request as AdmissionRequest<T>, onFailure));
}

export function mutatingRoute<T>(defaulter: DefaultingHandler<T>, onFailure: HandlerFailure): WebhookRoute {
  return admission((request) => mutate(defaulter, request as AdmissionRequest<T>, onFailure));
}

/** An admission handler as a route: the AdmissionReview parsed, the answer echoing its apiVersion. */
function admission(admit: (request: AdmissionRequest) => Promise<AdmissionResponse>): WebhookRoute {
  return {
    answer: async (body) => {
      const review = parseAdmissionReview(body);
      return admissionReviewResponse(review, await admit(review.request));
    },
    refuse: admissionRefusal,
  };
}

/** One path for every kind's conversions, as controller-runtime (`/convert`). */
export function conversionRoute(
  converters: readonly HubSpokeConverter[],
  logger: RuntimeLogger,
  events: WebhookHttpsServerOptions['events'],
): WebhookRoute {
  const named = (object: ConvertibleObject) => `${object.kind} ${objectName(object)}`;
  // Anyone who reaches the port can send such objects, with any name: a bucket (10, then 1
  // a second) bounds the log lines and Events they cause.
  const reports = {
    tokens: 10,
    at: Date.now(),
    skipped: 0,
    take(): boolean {
      const now = Date.now();
      this.tokens = Math.min(10, this.tokens + (now - this.at) / 1000);
      this.at = now;
      if (this.tokens < 1) {
        this.skipped++;
        return false;
      }
      this.tokens--;
      return true;
    },
  };
  const webhook = new ConversionWebhook(converters, {
    onFailure: (error, object) =>
      logger.error(
        `converting ${named(object)} from ${object.apiVersion} failed: ${(error as Error)?.stack ?? String(error)}`,
      ),
    // The conversion succeeds without the data: say so where the object's owner looks too.
    onDataIgnored: (object, reason, request) => {
      if (!reports.take()) return;
      const more = reports.skipped ? ` (and ${reports.skipped} more such, not reported)` : '';
      reports.skipped = 0;
      logger.warn(
        `converting ${named(object)} from ${object.apiVersion} to ${request.desiredAPIVersion}: ${reason}${more}`,
      );
      if (typeof object.metadata?.name === 'string') {
        events?.record(object as KubeObject, 'Warning', 'ConversionDataIgnored', reason);
      }
    },
  });
  return {
    answer: (body, query) => webhook.review(body, { timeoutMs: conversionTimeoutMs(query) }),
    refuse: conversionRefusal,
  };
}
