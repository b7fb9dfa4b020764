// The program test/nest-versions.e2e.test.ts runs on each Nest version: an operator app
// booted as a user's main.ts boots one, reporting on stdout (probe-events.ts) and taking
// commands on stdin ('health', 'logger', 'close'). Run from test/dist/nest-probe it loads the Nest the
// repository installs; copied to test/nest-floor/dist by scripts/nest-floor.mjs, the floor's.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { NestFactory } from '@nestjs/core';
import { WebhookServer } from '@nestor/operator';
import { OperatorHealthIndicator } from '@nestor/operator/terminus';
import { emit, EventLogger } from './probe-events.js';
import { operatorLoggerCalls } from './logger-probe.js';
import { ProbeModule } from './probe-module.js';

const PEERS = ['@nestjs/common', '@nestjs/core', '@nestjs/terminus', 'reflect-metadata', 'rxjs'];

/** The version of `name` that @nestor/operator itself loads: its package.json, found up from its entry. */
function versionFromOperator(name: string): string {
  const operator = createRequire(import.meta.resolve('@nestor/operator'));
  for (let dir = dirname(operator.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version: string;
      };
      if (manifest.name === name) return manifest.version;
    } catch {
      // no package.json at this level
    }
  }
  throw new Error(`no package.json of ${name} above its entry`);
}

async function main(): Promise<void> {
  emit({ kind: 'versions', versions: Object.fromEntries(PEERS.map((name) => [name, versionFromOperator(name)])) });
  const logger = new EventLogger();
  const app = await NestFactory.createApplicationContext(ProbeModule, { logger });
  const webhooks = app.get(WebhookServer);
  emit({ kind: 'started', webhookPort: webhooks.port!, webhookPaths: webhooks.paths });

  for await (const command of createInterface({ input: process.stdin })) {
    if (command === 'health') {
      const indicator = app.get(OperatorHealthIndicator);
      const ready = indicator.isReady('operator').operator.status;
      const live = indicator.isLive('operator').operator.status;
      emit({ kind: 'health', ready, live });
    } else if (command === 'logger') {
      emit({ kind: 'logged', calls: operatorLoggerCalls(logger) });
    } else if (command === 'close') {
      await app.close();
      return;
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    emit({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  },
);
