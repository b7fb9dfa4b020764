import { SetMetadata } from '@nestjs/common';
import type { ClassType } from '../../crd/field.decorator.js';
import { OPERATOR_CONVERSION_METADATA, OPERATOR_CONVERSION_METHOD_METADATA } from '../operator.constants.js';

/** What `@Conversion` takes besides the hub class. */
export interface ConversionOptions {
  /**
   * Keep the hub's data a spoke cannot hold in the `nestor.dev/conversion-data` annotation on
   * the spoke, and restore it when the spoke is converted back (default true).
   */
  keepLostData?: boolean;
  /**
   * The largest conversion data kept or restored, in bytes of JSON (default 64 KiB): past it
   * the data is not kept, or the annotation is ignored, with a warning in the log and a
   * `ConversionDataIgnored` Event on the object.
   */
  maxConversionDataBytes?: number;
}

export interface ConversionMetadata {
  hub: ClassType;
  options: ConversionOptions;
}

export interface ConversionMethodMetadata {
  direction: 'toHub' | 'fromHub';
  spoke: ClassType;
}

/**
 * Marks a provider as the converter of a kind with several versions: `hub` (a `@CustomResource`
 * class) is the version every other one converts to and from, through the class's
 * `@ConvertToHub(Spoke)` and `@ConvertFromHub(Spoke)` methods; spoke to spoke goes through the
 * hub. Served at `/convert` on the webhook server; `nestor manifests` gives the CRD
 * `conversion: Webhook`.
 */
export function Conversion(hub: ClassType, options: ConversionOptions = {}): ClassDecorator {
  // Metadata only, as @Webhook: the class stays an ordinary provider with injections.
  return SetMetadata(OPERATOR_CONVERSION_METADATA, { hub, options } satisfies ConversionMetadata);
}

/** `(spoke: Spoke) => Hub`: the spoke version's object as the hub (in place, or a new object). */
export function ConvertToHub(spoke: ClassType): MethodDecorator {
  return mark({ direction: 'toHub', spoke });
}

/** `(hub: Hub) => Spoke`: the hub's object as the spoke version (in place, or a new object). */
export function ConvertFromHub(spoke: ClassType): MethodDecorator {
  return mark({ direction: 'fromHub', spoke });
}

/** Appends, so that two conversion decorators on one method are seen and refused. */
function mark(entry: ConversionMethodMetadata): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const marks = (Reflect.getMetadata(OPERATOR_CONVERSION_METHOD_METADATA, method) ??
      []) as ConversionMethodMetadata[];
    Reflect.defineMetadata(OPERATOR_CONVERSION_METHOD_METADATA, [...marks, entry], method);
    return descriptor;
  };
}
