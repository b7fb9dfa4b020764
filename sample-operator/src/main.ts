// The operator's entry point: `node dist/main.js` (in a cluster, or with KUBECONFIG set).
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  OPERATOR_MODULE_OPTIONS,
  OperatorHttpServer,
  operatorLogger,
  type OperatorModuleOptions,
} from '@nestor/operator';

// JSON lines in a pod (stdout is no terminal), text on a terminal; LOG_FORMAT / LOG_LEVEL override.
Logger.overrideLogger(operatorLogger());
const logger = new Logger('SampleOperator');
try {
  // Imported here so that a bad setting in the environment is reported like any start-up error.
  const { AppModule, appOptions } = await import('./app.module.js');
  const app = await NestFactory.createApplicationContext(AppModule, { abortOnError: false });
  app.enableShutdownHooks(); // SIGTERM/SIGINT: stop intake, let reconciles finish, release the Lease
  // What the framework runs with: the module's options completed from the flags and environment.
  const { namespace, leaderElection, metrics } = app.get<OperatorModuleOptions>(OPERATOR_MODULE_OPTIONS);
  const ports = app.get(OperatorHttpServer).addresses;
  logger.log(
    `running: namespace ${namespace ?? '(all)'}, leader election ${leaderElection ? `on (Lease ${leaderElection.id})` : 'off'}, ` +
      `metrics ${ports.metrics ? `${metrics?.secure === false ? 'http' : 'https'} :${ports.metrics}` : 'off'}, health ${ports.health ? `:${ports.health}` : 'off'}, ` +
      `inventory polled every ${appOptions.inventory.pollIntervalMs} ms`,
  );
} catch (error) {
  logger.error(`could not start: ${(error as Error).message}`);
  process.exitCode = 1;
}
