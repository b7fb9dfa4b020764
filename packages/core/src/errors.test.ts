import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeRequest, KubeApiError, retryAfterMs } from './errors.js';

describe('describeRequest', () => {
  it('names verb, group, resource, namespace and name as RBAC does', () => {
    assert.deepEqual(describeRequest({ method: 'GET', path: '/api/v1/namespaces/ns/configmaps' }), {
      verb: 'list',
      group: '',
      groupVersion: 'v1',
      resource: 'configmaps',
      namespace: 'ns',
    });
    assert.deepEqual(describeRequest({ method: 'GET', path: '/apis/apps/v1/deployments', watch: true }), {
      verb: 'watch',
      group: 'apps',
      groupVersion: 'apps/v1',
      resource: 'deployments',
    });
    const status = describeRequest({ method: 'PATCH', path: '/apis/x.dev/v1/namespaces/n/widgets/w/status' });
    assert.equal(status.verb, 'patch');
    assert.equal(status.resource, 'widgets/status');
    assert.equal(status.name, 'w');
    const namespace = describeRequest({ method: 'DELETE', path: '/api/v1/namespaces/n' });
    assert.deepEqual(
      [namespace.verb, namespace.resource, namespace.name, namespace.namespace],
      ['delete', 'namespaces', 'n', undefined],
    );
    assert.equal(describeRequest({ method: 'DELETE', path: '/api/v1/namespaces/n/pods' }).verb, 'deletecollection');
    assert.equal(describeRequest({ method: 'GET', path: '/version' }).resource, undefined);
  });
});

describe('KubeApiError', () => {
  const status = (code: number, reason: string, message: string, details?: object) =>
    Buffer.from(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details }),
    );

  it('takes reason and message from the Status and names the RBAC rule a 403 needs', () => {
    const error = KubeApiError.fromResponse(
      { method: 'GET', path: '/apis/apps/v1/namespaces/ns/deployments', watch: true },
      403,
      status(403, 'Forbidden', 'deployments.apps is forbidden: User "x" cannot watch resource "deployments"'),
    );
    assert.equal(error.status, 403);
    assert.equal(error.reason, 'Forbidden');
    assert.match(
      error.message,
      /^GET \/apis\/apps\/v1\/namespaces\/ns\/deployments: HTTP 403 Forbidden: deployments.apps is forbidden/,
    );
    assert.match(error.hint!, /apiGroups: \["apps"\], resources: \["deployments"\], verbs: \["watch"\]/);
  });

  it('tells a missing object from a resource the server does not serve', () => {
    const missing = KubeApiError.fromResponse(
      { method: 'GET', path: '/api/v1/namespaces/ns/configmaps/c' },
      404,
      status(404, 'NotFound', 'configmaps "c" not found', { name: 'c', kind: 'configmaps' }),
    );
    assert.equal(missing.hint, undefined);
    const unserved = KubeApiError.fromResponse(
      { method: 'GET', path: '/apis/x.dev/v1/widgets' },
      404,
      '404 page not found\n',
    );
    assert.equal(unserved.reason, 'NotFound');
    assert.match(unserved.hint!, /does not serve widgets.x.dev in x.dev\/v1: install its CustomResourceDefinition/);
  });

  it('reads Retry-After and recognizes 410 Gone as Status or as HTTP status', () => {
    const throttled = KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/pods' }, 429, 'slow down', '7');
    assert.equal(throttled.retryAfterSeconds, 7);
    const expired = KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/pods' }, 410, {
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 1 (2)',
    });
    assert.ok(expired.isGone);
    assert.ok(KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/pods' }, 410, '').isGone);
  });

  it('says the API server is unreachable when the connection is refused', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const error = KubeApiError.fromNetwork({ method: 'GET', path: '/api/v1/pods' }, 'https://127.0.0.1:6443', refused);
    assert.equal(error.status, 0);
    assert.equal(error.reason, 'Unreachable');
    assert.equal(error.code, 'ECONNREFUSED');
    assert.match(error.message, /The API server at https:\/\/127.0.0.1:6443 is unreachable/);
    assert.equal(error.cause, refused);
  });
});

describe('retryAfterMs', () => {
  it('finds the wait the server asked for on the error or its causes, and nothing else', () => {
    const throttled = KubeApiError.fromResponse({ method: 'PATCH', path: '/api/v1/x' }, 429, 'Too many requests', '1');
    assert.equal(retryAfterMs(throttled), 1000);
    assert.equal(retryAfterMs(new Error('reconcile failed', { cause: throttled })), 1000);
    const inStatus = KubeApiError.fromResponse({ method: 'GET', path: '/api/v1/x' }, 500, {
      kind: 'Status',
      reason: 'ServerTimeout',
      details: { retryAfterSeconds: 3 },
    });
    assert.equal(retryAfterMs(inStatus), 3000);
    assert.equal(retryAfterMs(KubeApiError.fromResponse({ method: 'GET', path: '/x' }, 429, '', '0')), undefined);
    assert.equal(retryAfterMs(KubeApiError.fromResponse({ method: 'GET', path: '/x' }, 409, '')), undefined);
    assert.equal(retryAfterMs(new Error('no')), undefined);
    assert.equal(retryAfterMs('text'), undefined);
  });
});
