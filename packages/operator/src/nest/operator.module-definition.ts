import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableOperatorModule,
  /** The options as forRoot() / forRootAsync() gave them. */
  MODULE_OPTIONS_TOKEN: GIVEN_OPERATOR_OPTIONS,
  OPTIONS_TYPE: OPERATOR_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: OPERATOR_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OperatorModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/**
 * The options the operator runs with: what forRoot() gave, completed from the deployment's
 * flags and environment (see operator-flags.ts). Inject this one.
 */
export const OPERATOR_MODULE_OPTIONS = Symbol('OPERATOR_MODULE_OPTIONS');
