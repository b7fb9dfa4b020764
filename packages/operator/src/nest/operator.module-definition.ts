import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OperatorModuleOptions } from './operator-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableOperatorModule,
  MODULE_OPTIONS_TOKEN: OPERATOR_MODULE_OPTIONS,
  OPTIONS_TYPE: OPERATOR_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: OPERATOR_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OperatorModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
