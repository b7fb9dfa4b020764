// The operator's entry point: `node dist/main.js` (in the management cluster, or with
// KUBECONFIG set).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const app = await NestFactory.createApplicationContext(AppModule);
app.enableShutdownHooks(); // SIGTERM: finish running reconciles, release the Lease
