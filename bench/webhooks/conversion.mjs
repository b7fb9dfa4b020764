// The Nestor side of the conversion case: the two-version Widget of conversion.bench.nestor.dev,
// v1 the hub (spec.size, the stored version) and v2 a spoke (spec.replicas), as the Go peer's
// WidgetV1/WidgetV2 (bench/controller-runtime/webhook.go). The plain peer serves a
// ConversionWebhook over a HubSpokeConverter; the Nest peer provides a @Conversion(WidgetV1)
// class that WebhookServer serves at /convert. Both with Nestor's defaults (keepLostData:
// the hub's data a spoke cannot hold is computed on each conversion from the hub).
import { counters } from './protocol.mjs';

export const CONVERSION_GROUP = 'conversion.bench.nestor.dev';

/** The user's two functions, shared by both peers. */
export const spokeV2 = {
  toHub: (widget) => ({
    spec: { size: widget.spec?.replicas, round: widget.spec?.round, description: widget.spec?.description },
    ...(widget.status ? { status: widget.status } : {}),
  }),
  fromHub: (widget) => ({
    spec: { replicas: widget.spec?.size, round: widget.spec?.round, description: widget.spec?.description },
    ...(widget.status ? { status: widget.status } : {}),
  }),
};

/** Whether this build has Nestor's conversion API (the peers then serve /convert). */
export async function conversionAvailable() {
  const operator = await import('@nestor/operator');
  const webhooks = await import('@nestor/operator/webhooks').catch(() => operator);
  return typeof operator.Conversion === 'function' && typeof webhooks.ConversionWebhook === 'function';
}

/** A route for the plain server: (body, res, query) => void. */
export async function conversionRoute() {
  const { ConversionWebhook, conversionTimeoutMs } =
    await import('../../packages/operator/dist/webhooks/conversion-webhook.js');
  const { HubSpokeConverter } = await import('../../packages/operator/dist/webhooks/hub-spoke-converter.js');
  const webhook = new ConversionWebhook(
    [new HubSpokeConverter({ group: CONVERSION_GROUP, kind: 'Widget', hub: 'v1', spokes: { v2: spokeV2 } })],
    { onFailure: (error) => console.error(error) },
  );
  return async (body, res, query) => {
    try {
      const answer = await webhook.review(body, { timeoutMs: conversionTimeoutMs(query) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      counters.conversions++;
      counters.objects += answer.response.convertedObjects.length;
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`${error.message}\n`);
    }
  };
}

/** The Nest peer's converter: @Conversion(WidgetV1) with the two methods, and the two version classes. */
export async function conversionProviders() {
  const { Conversion, ConvertFromHub, ConvertToHub, CustomResource } = await import('@nestor/operator');
  class WidgetV1 {}
  Reflect.decorate(
    [CustomResource({ group: CONVERSION_GROUP, version: 'v1', kind: 'Widget', storage: true })],
    WidgetV1,
  );
  class WidgetV2 {}
  Reflect.decorate(
    [CustomResource({ group: CONVERSION_GROUP, version: 'v2', kind: 'Widget', storage: false })],
    WidgetV2,
  );

  class WidgetConversion {
    toHub(widget) {
      return spokeV2.toHub(widget);
    }

    fromHub(widget) {
      counters.objects++; // once per object converted to v2 (toHub also runs, to find what v2 cannot hold)
      return spokeV2.fromHub(widget);
    }
  }
  for (const [method, decorator] of [
    ['toHub', ConvertToHub(WidgetV2)],
    ['fromHub', ConvertFromHub(WidgetV2)],
  ]) {
    Reflect.decorate(
      [decorator],
      WidgetConversion.prototype,
      method,
      Object.getOwnPropertyDescriptor(WidgetConversion.prototype, method),
    );
  }
  Reflect.decorate([Conversion(WidgetV1)], WidgetConversion);
  return [WidgetConversion];
}
