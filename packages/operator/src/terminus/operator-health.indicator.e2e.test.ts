import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, OperatorModule, Reconcile } from '../index.js';
import { OperatorHealthIndicator } from './index.js';

describe('OperatorHealthIndicator', () => {
  let env: TestEnvironment;
  let app: TestingModule;

  @Controller(ConfigMap)
  class Noop {
    @Reconcile() reconcile() {}
  }

  before(async () => {
    env = await TestEnvironment.start();
    const namespace = await env.createNamespace('terminus');
    app = await Test.createTestingModule({
      imports: [
        TerminusModule,
        OperatorModule.forRoot({ kubeConfig: env.kubeConfig, namespace, metrics: { port: 0 }, health: { port: 0 } }),
      ],
      providers: [Noop, OperatorHealthIndicator],
    }).compile();
    await app.init();
  });
  after(async () => {
    await app?.close();
    await env?.stop();
  });

  it('reports the manager ready with its informers, and down once the app closed', async () => {
    const indicator = app.get(OperatorHealthIndicator);
    const ready = await waitFor(() => {
      const result = indicator.isReady('operator');
      return result.operator.status === 'up' ? result : undefined;
    });
    assert.equal((ready.operator as { checks?: Record<string, string> }).checks?.['informer:configmaps'], 'ok');
    assert.equal(indicator.isLive('live').live.status, 'up');
    await app.close();
    assert.equal(indicator.isLive('live').live.status, 'down');
    assert.equal(indicator.isReady('operator').operator.status, 'down');
  });
});
