import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { webhookConfigurations, webhookPath } from './webhook-configuration.js';

const widgets = { group: 'test.nestor.dev', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const pods = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };

describe('webhookPath', () => {
  it('follows controller-runtime: dots as dashes, lower-case kind, an empty core group', () => {
    assert.equal(webhookPath('validating', widgets), '/validate-test-nestor-dev-v1-widget');
    assert.equal(webhookPath('mutating', widgets), '/mutate-test-nestor-dev-v1-widget');
    assert.equal(webhookPath('validating', pods), '/validate--v1-pod');
  });
});

describe('webhookConfigurations', () => {
  it('writes the API server’s defaults explicitly and the options given', () => {
    const [validating, mutating] = webhookConfigurations(
      [
        {
          type: 'validating',
          resource: widgets,
          operations: ['CREATE', 'DELETE'],
          options: { failurePolicy: 'Ignore' },
        },
        {
          type: 'mutating',
          resource: pods,
          operations: ['CREATE'],
          options: {
            reinvocationPolicy: 'IfNeeded',
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'a' } },
            matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
          },
        },
      ],
      { name: 'demo', service: { namespace: 'ops', name: 'demo-webhooks' } },
    );
    assert.equal(validating!.kind, 'ValidatingWebhookConfiguration');
    assert.deepEqual(validating!.webhooks[0], {
      name: 'validate-test-nestor-dev-v1-widget.nestor.dev',
      admissionReviewVersions: ['v1'],
      clientConfig: {
        service: { namespace: 'ops', name: 'demo-webhooks', path: '/validate-test-nestor-dev-v1-widget' },
      },
      rules: [
        {
          apiGroups: ['test.nestor.dev'],
          apiVersions: ['v1'],
          resources: ['widgets'],
          operations: ['CREATE', 'DELETE'],
          scope: 'Namespaced',
        },
      ],
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      timeoutSeconds: 10,
      matchPolicy: 'Equivalent',
    });
    assert.equal(mutating!.kind, 'MutatingWebhookConfiguration');
    const entry = mutating!.webhooks[0]!;
    assert.equal(entry.name, 'mutate-v1-pod.nestor.dev');
    assert.equal(entry.reinvocationPolicy, 'IfNeeded');
    assert.deepEqual(entry.namespaceSelector, { matchLabels: { 'kubernetes.io/metadata.name': 'a' } });
    assert.equal((entry.matchConditions as unknown[]).length, 1);
  });

  it('leaves out an empty configuration, and refuses a timeout the API server would', () => {
    assert.deepEqual(
      webhookConfigurations([{ type: 'mutating', resource: widgets, operations: ['CREATE'], options: {} }]).map(
        (c) => c.kind,
      ),
      ['MutatingWebhookConfiguration'],
    );
    assert.throws(
      () =>
        webhookConfigurations([
          { type: 'validating', resource: widgets, operations: ['CREATE'], options: { timeoutSeconds: 31 } },
        ]),
      /timeoutSeconds must be 1 to 30/,
    );
  });

  it('points at a URL for a local run, each webhook’s path appended, and refuses what the API server would', () => {
    const entries = [
      { type: 'validating' as const, resource: widgets, operations: ['CREATE' as const], options: {} },
      { type: 'mutating' as const, resource: pods, operations: ['CREATE' as const], options: {} },
    ];
    const [validating, mutating] = webhookConfigurations(entries, { url: 'https://127.0.0.1:9443/' });
    assert.deepEqual(validating!.webhooks[0]!.clientConfig, {
      url: 'https://127.0.0.1:9443/validate-test-nestor-dev-v1-widget',
    });
    assert.deepEqual(mutating!.webhooks[0]!.clientConfig, { url: 'https://127.0.0.1:9443/mutate--v1-pod' });
    assert.throws(() => webhookConfigurations(entries, { url: 'http://127.0.0.1:9443' }), /must be https:/);
    assert.throws(() => webhookConfigurations(entries, { url: '127.0.0.1:9443' }), /must be https:|is not a URL/);
    assert.throws(
      () => webhookConfigurations(entries, { url: 'https://a', service: { namespace: 'n', name: 's' } }),
      /either url or service/,
    );
  });

  it('gives every webhook the namespaceSelector, unless its @Webhook sets one', () => {
    const own = { matchLabels: { team: 'a' } };
    const shared = { matchLabels: { 'kubernetes.io/metadata.name': 'test-1' } };
    const [validating] = webhookConfigurations(
      [
        { type: 'validating', resource: widgets, operations: ['CREATE'], options: {} },
        { type: 'validating', resource: pods, operations: ['CREATE'], options: { namespaceSelector: own } },
      ],
      { namespaceSelector: shared },
    );
    assert.deepEqual(
      validating!.webhooks.map((w) => w.namespaceSelector),
      [shared, own],
    );
  });
});
