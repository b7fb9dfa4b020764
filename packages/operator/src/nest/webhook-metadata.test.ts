import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Default, ValidateCreate, ValidateDelete, ValidateUpdate, Webhook } from './decorators/webhook.decorator.js';
import { readWebhookDefinition, webhookConfigurationsOf, webhookEntries } from './webhook-metadata.js';

@CustomResource({ group: 'hooks.example.com', version: 'v2', kind: 'Gadget' })
class Gadget {}

@Webhook(Gadget, { failurePolicy: 'Ignore', timeoutSeconds: 5 })
class GadgetWebhook {
  @ValidateCreate() create() {}
  @ValidateDelete() remove() {}
  @Default() defaults() {}
}

@Webhook(ConfigMap)
class UpdatesOnly {
  @ValidateUpdate() update() {}
}

@Webhook(ConfigMap)
class NoHandler {}

@Webhook(ConfigMap)
class TwoDefaults {
  @Default() one() {}
  @Default() two() {}
}

class Plain {}

describe('readWebhookDefinition', () => {
  it('reads the kind, the options and each handler’s method', () => {
    const definition = readWebhookDefinition(GadgetWebhook)!;
    assert.equal(definition.resource.plural, 'gadgets');
    assert.deepEqual(definition.handlers, { validateCreate: 'create', validateDelete: 'remove', default: 'defaults' });
    assert.equal(readWebhookDefinition(Plain), undefined);
  });

  it('sends the operations that have a handler; defaulting gets CREATE and UPDATE', () => {
    const entries = webhookEntries(readWebhookDefinition(GadgetWebhook)!);
    assert.deepEqual(
      entries.map((e) => [e.type, e.operations]),
      [
        ['validating', ['CREATE', 'DELETE']],
        ['mutating', ['CREATE', 'UPDATE']],
      ],
    );
    assert.deepEqual(webhookEntries(readWebhookDefinition(UpdatesOnly)!)[0]!.operations, ['UPDATE']);
  });

  it('names the class and what to do when misused', () => {
    assert.throws(
      () => readWebhookDefinition(NoHandler),
      /NoHandler is decorated with @Webhook\(\) but has no handler/,
    );
    assert.throws(() => readWebhookDefinition(TwoDefaults), /TwoDefaults has 2 @Default\(\) methods \(one, two\)/);
  });
});

describe('webhookConfigurationsOf', () => {
  it('writes both configurations from the classes, skipping others', () => {
    const configurations = webhookConfigurationsOf([GadgetWebhook, UpdatesOnly, Plain], { name: 'gadgets' });
    assert.deepEqual(
      configurations.map((c) => [
        c.kind,
        c.metadata.name,
        c.webhooks.map((w) => (w.clientConfig as { service: { path: string } }).service.path),
      ]),
      [
        [
          'ValidatingWebhookConfiguration',
          'gadgets',
          ['/validate-hooks-example-com-v2-gadget', '/validate--v1-configmap'],
        ],
        ['MutatingWebhookConfiguration', 'gadgets', ['/mutate-hooks-example-com-v2-gadget']],
      ],
    );
    assert.equal(configurations[0]!.webhooks[0]!.timeoutSeconds, 5);
    assert.equal(configurations[0]!.webhooks[0]!.failurePolicy, 'Ignore');
  });
});
