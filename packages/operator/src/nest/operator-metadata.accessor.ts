import { Injectable, type Type } from '@nestjs/common';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Reflector takes any class or method
type Target = Type | Function;
import { Reflector } from '@nestjs/core';
import {
  OPERATOR_CONTROLLER_METADATA,
  OPERATOR_FINALIZER_METADATA,
  OPERATOR_RECONCILE_METADATA,
  OPERATOR_SOURCE_METADATA,
  OPERATOR_WATCHES_METADATA,
} from './operator.constants.js';
import type { ControllerMetadata } from './decorators/controller.decorator.js';
import type { FinalizerMetadata } from './decorators/finalizer.decorator.js';
import type { WatchesMetadata } from './decorators/watches.decorator.js';

/** Reads what the decorators wrote. */
@Injectable()
export class OperatorMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getController(target: Target): ControllerMetadata | undefined {
    return this.reflector.get<ControllerMetadata | undefined>(OPERATOR_CONTROLLER_METADATA, target);
  }

  isReconcile(method: Target): boolean {
    return this.reflector.get<boolean | undefined>(OPERATOR_RECONCILE_METADATA, method) === true;
  }

  getWatches(method: Target): WatchesMetadata | undefined {
    return this.reflector.get<WatchesMetadata | undefined>(OPERATOR_WATCHES_METADATA, method);
  }

  getFinalizer(method: Target): FinalizerMetadata | undefined {
    return this.reflector.get<FinalizerMetadata | undefined>(OPERATOR_FINALIZER_METADATA, method);
  }

  isSource(method: Target): boolean {
    return this.reflector.get<boolean | undefined>(OPERATOR_SOURCE_METADATA, method) === true;
  }
}
