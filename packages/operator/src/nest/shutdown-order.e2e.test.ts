import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { V1ConfigMap } from '../client/kinds.js';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, Reconcile, type ReconcileContext } from '../index.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

// Reconciles use the application's providers. Before, the drain ran in
// beforeApplicationShutdown, after every onModuleDestroy: a database client was closed
// while reconciles still used it.

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start();
});
after(() => env.stop());

const timeline: string[] = [];

/** Stands for a database client: closed in onModuleDestroy, as a TypeORM or Prisma module does. */
@Injectable()
class Database implements OnModuleDestroy {
  closed = false;
  query(what: string): void {
    if (this.closed) throw new Error(`query ${what} on a closed database`);
    timeline.push(`query ${what}`);
  }
  onModuleDestroy(): void {
    this.closed = true;
    timeline.push('database closed');
  }
}

@Controller(ConfigMap)
class SlowController {
  started = false;
  constructor(private readonly db: Database) {}

  @Reconcile()
  async reconcile(configMap: V1ConfigMap, ctx: ReconcileContext): Promise<void> {
    this.started = true;
    timeline.push('reconcile started');
    await new Promise((resolve) => setTimeout(resolve, 800));
    this.db.query(configMap.metadata!.name!);
    timeline.push(`reconcile ended (aborted: ${ctx.signal.aborted})`);
  }
}

describe('shutdown order', () => {
  it('drains running reconciles before the application providers are destroyed', async () => {
    const namespace = await env.createNamespace('shutdown');
    // The application's own provider sits in the root module: destroyed first of the app's.
    const app = await bootOperatorApp({
      kubeConfig: env.kubeConfig,
      namespace,
      shutdownGraceMs: 10_000,
      providers: [Database, SlowController],
    });
    await createConfigMap(env.client, namespace, 'in-flight');
    await waitFor(() => app.get(SlowController).started, { timeoutMs: 20_000, what: 'the reconcile to start' });
    await app.close();
    assert.deepEqual(timeline, [
      'reconcile started',
      'query in-flight',
      'reconcile ended (aborted: false)',
      'database closed',
    ]);
  });
});
