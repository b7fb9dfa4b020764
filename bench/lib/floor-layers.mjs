// The floor by layer (bench/floor.mjs): each a main file written beside the scaffolded app's
// own (same node_modules, same Deployment environment), each left idle for the same time.
// The difference between two rows without `reference` is what that layer costs.

const CACHE_POOLS = `{ group: 'floor.nestor.dev', version: 'v1alpha1', kind: 'CachePool', plural: 'cachepools', namespaced: true }`;

/** An idle application context of an empty module, after `imports`. */
function emptyNestContext(imports) {
  return `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
${imports}class Empty {}
Reflect.decorate([Module({})], Empty);
const app = await NestFactory.createApplicationContext(Empty);
app.enableShutdownHooks();
setInterval(() => {}, 1 << 30);
`;
}

/** The Nest-free entry started with `options` (source text) and one CachePool controller. */
function nestFreeOperator(options) {
  return `import { createOperator } from '@nestor/operator/runtime';
const operator = await createOperator(${options});
operator.manager.addController({ name: 'cachepool', resource: ${CACHE_POOLS}, reconcile: async () => {} });
await operator.start();
process.once('SIGTERM', () => operator.stop().then(() => process.exit(0)));
`;
}

/** [key, label, file under dist/floor-layers/, its source (none: the app's own file), reference?] */
export const LAYERS = [
  ['bare', 'Node alone', 'bare.js', `setInterval(() => {}, 1 << 30);\n`],
  [
    'nest',
    '+ Nest: an application context, empty module (@nestjs/core, @nestjs/common, rxjs)',
    'nest-context.js',
    emptyNestContext(''),
  ],
  [
    'nest-import',
    '+ import @nestor/operator (nothing started)',
    'nest-context-import.js',
    emptyNestContext("import '@nestor/operator';\n"),
  ],
  [
    'nest-operator',
    '+ OperatorModule.forRoot() and the CachePool controller, as an application context (no HTTP app)',
    'operator-context.js',
    `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OperatorModule } from '@nestor/operator';
import { CachePoolModule } from '../cache-pool/cache-pool.module.js';
class Operator {}
Reflect.decorate([Module({ imports: [OperatorModule.forRoot(), CachePoolModule] })], Operator);
const app = await NestFactory.createApplicationContext(Operator);
app.enableShutdownHooks();
`,
  ],
  ['init', "+ the starter's HTTP app (express, AppController): the generated dist/main.js", '../main.js', undefined],
  [
    'runtime-deployed',
    'reference: the Nest-free entry, createOperator() with the Deployment settings (HTTPS metrics, probes, leader election), one CachePool controller',
    'create-operator.js',
    nestFreeOperator(''),
    true,
  ],
  [
    'runtime-bare',
    'reference: the Nest-free entry, createOperator({ readFlags: false }) (no servers, no Lease), one CachePool controller',
    'create-operator-bare.js',
    nestFreeOperator('{ readFlags: false }'),
    true,
  ],
  [
    'starter',
    'reference: the starter alone, as `nest new` leaves it (Nest, express, no operator)',
    'starter.js',
    `import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppController } from '../app.controller.js';
import { AppService } from '../app.service.js';
class Starter {}
Reflect.decorate([Module({ controllers: [AppController], providers: [AppService] })], Starter);
const app = await NestFactory.create(Starter);
app.enableShutdownHooks();
await app.listen(process.env.PORT ?? 3000);
`,
    true,
  ],
].map(([key, label, file, source, reference = false]) => ({ key, label, file, source, reference }));
