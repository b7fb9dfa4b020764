import { HttpException, IntrinsicException, type ExecutionContext } from '@nestjs/common';
import { ApplicationConfig, ExternalContextCreator, NestContainer, type ModulesContainer } from '@nestjs/core';
import { AdmissionDenied } from '../webhooks/admission-denied.js';
import type { AdmissionContext } from '../webhooks/admission-handler.js';

/** What `ExecutionContext.getType()` answers inside a webhook handler's guards, interceptors and filters. */
export const WEBHOOK_CONTEXT_TYPE = 'nestor-webhook';

/**
 * The admission request a guard or interceptor is looking at: the handler's last argument.
 * `context.getArgs()` are the handler's own arguments (the object, the old object on update,
 * this context).
 *
 * @example
 * canActivate(context: ExecutionContext) {
 *   return !webhookContextOf(context).userInfo.groups?.includes('contractors');
 * }
 */
export function webhookContextOf<T = unknown>(context: ExecutionContext): AdmissionContext<T> {
  if (context.getType<string>() !== WEBHOOK_CONTEXT_TYPE) {
    throw new Error(
      `webhookContextOf() reads a webhook handler's context, not a '${context.getType()}' one: check context.getType() first in an enhancer shared with other transports`,
    );
  }
  const args = context.getArgs();
  return args[args.length - 1] as AdmissionContext<T>;
}

/**
 * Runs admission handlers through Nest's enhancers, as Nest runs a route or a message
 * handler: the guards, interceptors and exception filters declared on the `@Webhook` class
 * or method (`@UseGuards`, `@UseInterceptors`, `@UseFilters`). A guard that refuses and an
 * HttpException become a denial with the exception's status and message, as AdmissionDenied.
 *
 * Global enhancers (`useGlobalGuards`, `APP_GUARD`, ...) apply only with `inheritAppConfig`,
 * as Nest's hybrid applications do for a second transport: an app-wide guard written for
 * HTTP callers would otherwise refuse the API server's reviews.
 */
export class WebhookEnhancers {
  private readonly creator: ExternalContextCreator;

  constructor(modules: ModulesContainer, appCreator: ExternalContextCreator, inheritAppConfig: boolean) {
    this.creator = inheritAppConfig ? appCreator : ExternalContextCreator.fromContainer(new WebhookContainer(modules));
  }

  /** The method of `instance` as a function that runs through its enhancers. */
  wrap<F extends (...args: never[]) => unknown>(instance: object, methodName: string): F {
    const target = instance as Record<string, (...args: unknown[]) => unknown>;
    const method = target[methodName]!;
    const enhanced = this.creator.create(
      target,
      method,
      methodName,
      undefined,
      undefined,
      undefined,
      undefined,
      { guards: true, interceptors: true, filters: true },
      WEBHOOK_CONTEXT_TYPE,
    ) as (...args: unknown[]) => Promise<unknown>;
    return (async (...args: unknown[]) => {
      try {
        return await enhanced(...args);
      } catch (error) {
        throw error instanceof HttpException ? denialOf(error) : error;
      }
    }) as unknown as F;
  }
}

/**
 * The application's modules under an application config of their own, with no app-wide
 * enhancers in it: what Nest gives a hybrid app's second transport without
 * `inheritAppConfig` (a fresh ApplicationConfig). Public classes and methods only: the
 * creator finds each enhancer's module through `getModules()` and the globals through
 * `applicationConfig`.
 */
class WebhookContainer extends NestContainer {
  constructor(private readonly appModules: ModulesContainer) {
    super(new ApplicationConfig());
  }

  override getModules(): ModulesContainer {
    return this.appModules;
  }
}

/**
 * A denial is a verdict, not a failure: Nest's last-resort exception filter logs every Error
 * as `ERROR [ExceptionsHandler]` with its stack but an IntrinsicException, its public way to
 * mark an exception that is not one (Nest 11 and 12). AdmissionDenied is made in webhooks/,
 * which loads no Nest; the Nest layer makes it one when it loads. Guards, interceptors and
 * the webhook's own filters still see the AdmissionDenied itself.
 */
if (!(AdmissionDenied.prototype instanceof IntrinsicException)) {
  Object.setPrototypeOf(AdmissionDenied.prototype, IntrinsicException.prototype);
}

function denialOf(exception: HttpException): AdmissionDenied {
  const response = exception.getResponse();
  // Nest's built-in exceptions answer { message, error, statusCode }; message may be a list (ValidationPipe).
  const detail =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  const message = Array.isArray(detail) ? detail.join('; ') : typeof detail === 'string' ? detail : exception.message;
  return new AdmissionDenied(message, { code: exception.getStatus() });
}
