// Boots a Nest application context with OperatorModule for the in-process e2e tests.
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import { OperatorModule, type OperatorModuleOptions } from '../index.js';

export interface OperatorAppOptions extends Omit<OperatorModuleOptions, 'kubeConfig'> {
  kubeConfig: KubeConfig;
  /** The application's providers: controllers and what they inject. */
  providers: unknown[];
  logger?: LoggerService;
}

/**
 * An initialised application (metrics and probes off unless asked); closed again when its
 * start-up fails, so a failing test leaves no watches behind.
 */
export async function bootOperatorApp(options: OperatorAppOptions): Promise<INestApplicationContext> {
  const { providers, logger, ...moduleOptions } = options;
  const builder = Test.createTestingModule({
    imports: [OperatorModule.forRoot({ metrics: { port: 0 }, health: { port: 0 }, ...moduleOptions })],
    providers: providers as never[],
  });
  const moduleRef = await (logger ? builder.setLogger(logger) : builder).compile();
  try {
    return await moduleRef.init();
  } catch (error) {
    await moduleRef.close();
    throw error;
  }
}
