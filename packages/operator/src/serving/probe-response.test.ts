import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ManagerHealth } from '../runtime/manager/manager.js';
import { probeResponse } from './probe-response.js';

const syncing: ManagerHealth = {
  live: true,
  ready: false,
  checks: [
    { name: 'manager', ok: false, detail: 'starting' },
    {
      name: 'informer:configmaps',
      ok: false,
      detail:
        'not synced yet: configmaps is forbidden: User "system:serviceaccount:ops:op" cannot list resource "configmaps"',
    },
  ],
};

const running: ManagerHealth = {
  live: true,
  ready: true,
  checks: [
    { name: 'manager', ok: true, detail: 'running' },
    { name: 'informer:configmaps', ok: true },
  ],
};

describe('probeResponse', () => {
  it('answers a passing probe with ok, and lists the checks with ?verbose', () => {
    assert.deepEqual(probeResponse('readyz', running, false), { status: 200, body: 'ok\n' });
    assert.deepEqual(probeResponse('readyz', running, true), {
      status: 200,
      body: '[+]manager ok\n[+]informer:configmaps ok\nreadyz check passed\n',
    });
  });

  it('lists which checks failed, never why', () => {
    const { status, body } = probeResponse('readyz', syncing, false);
    assert.equal(status, 503);
    assert.equal(body, '[-]manager failed\n[-]informer:configmaps failed\nreadyz check failed\n');
    assert.doesNotMatch(body, /forbidden|serviceaccount|starting/);
  });

  it('passes liveness while the manager starts, and fails it once the manager stopped', () => {
    assert.deepEqual(probeResponse('healthz', syncing, false), { status: 200, body: 'ok\n' });
    assert.deepEqual(probeResponse('healthz', syncing, true), {
      status: 200,
      body: '[+]manager ok\nhealthz check passed\n',
    });
    const stopped: ManagerHealth = {
      live: false,
      ready: false,
      checks: [{ name: 'manager', ok: false, detail: 'failed' }],
    };
    assert.deepEqual(probeResponse('healthz', stopped, false), {
      status: 503,
      body: '[-]manager failed\nhealthz check failed\n',
    });
  });
});
