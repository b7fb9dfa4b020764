import { HttpException, type ArgumentsHost, type ExecutionContext } from '@nestjs/common';
import { ExternalContextCreator, type ModulesContainer, type NestContainer } from '@nestjs/core';
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
    // fromContainer without an application config: the same creator, without the globals.
    const creator = inheritAppConfig
      ? appCreator
      : ExternalContextCreator.fromContainer({ getModules: () => modules } as unknown as NestContainer);
    this.creator = withQuietDenials(creator);
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

/** The part of Nest's exception handler for a handler run through ExternalContextCreator that this reaches. */
interface ExternalExceptionsHandler {
  next(exception: unknown, host: ArgumentsHost): unknown;
  invokeCustomFilters(exception: unknown, host: ArgumentsHost): unknown;
}

/**
 * The creator with one change to the exception handlers it makes: an AdmissionDenied that no
 * filter of the webhook's catches is thrown on to the webhook server as it is. Nest's last
 * resort would log it as `ERROR [ExceptionsHandler]` with its stack, as it does any Error
 * that is not one of its own HttpExceptions; a denial is a verdict, not a failure. Guards,
 * interceptors and the webhook's own filters still see the AdmissionDenied itself. The
 * change is made on an object derived from the creator, so the application's own creator is
 * left as it is.
 */
function withQuietDenials(creator: ExternalContextCreator): ExternalContextCreator {
  const internals = creator as unknown as { filtersContextCreator: { create(...args: unknown[]): unknown } };
  const filters = internals.filtersContextCreator;
  const quiet = {
    create: (...args: unknown[]) => {
      const handler = filters.create(...args) as ExternalExceptionsHandler;
      const next = handler.next.bind(handler);
      handler.next = (exception, host) => {
        if (!(exception instanceof AdmissionDenied)) return next(exception, host);
        const handled = handler.invokeCustomFilters(exception, host);
        if (handled !== undefined && handled !== null) return handled;
        throw exception;
      };
      return handler;
    },
  };
  return Object.create(creator, { filtersContextCreator: { value: quiet } }) as ExternalContextCreator;
}

function denialOf(exception: HttpException): AdmissionDenied {
  const response = exception.getResponse();
  // Nest's built-in exceptions answer { message, error, statusCode }; message may be a list (ValidationPipe).
  const detail =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : response;
  const message = Array.isArray(detail) ? detail.join('; ') : typeof detail === 'string' ? detail : exception.message;
  return new AdmissionDenied(message, { code: exception.getStatus() });
}
