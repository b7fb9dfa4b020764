// What a validating or a defaulting webhook answers, from the user's handlers: the
// semantics of controller-runtime's Validator and Defaulter, without Nest.
import { MAX_OBJECT_DEPTH } from '@nestor/core';
import { AdmissionDenied } from './admission-denied.js';
import type { AdmissionOperation, AdmissionRequest, AdmissionResponse, UserInfo } from './admission-review.js';
import { nestsDeeperThan } from './conversion-data.js';
import { jsonPatch } from './json-patch.js';

/** What a handler knows about the request beside the object. */
export interface AdmissionContext<T = unknown> {
  operation: AdmissionOperation;
  /**
   * The request will not be persisted (`--dry-run=server`): a handler with side effects
   * must skip them (the configuration declares `sideEffects: NoneOnDryRun`).
   */
  dryRun: boolean;
  userInfo: UserInfo;
  /** The stored object on UPDATE and DELETE. */
  oldObject?: T;
  name?: string;
  namespace?: string;
  /** The whole request as the API server sent it. */
  request: AdmissionRequest<T>;
}

/** Warnings for the client (kubectl prints them), or nothing. */
export type Warnings = string[] | void;

export interface ValidationHandlers<T = unknown> {
  create?: (object: T, context: AdmissionContext<T>) => Warnings | Promise<Warnings>;
  update?: (object: T, oldObject: T, context: AdmissionContext<T>) => Warnings | Promise<Warnings>;
  /** Called with the object being deleted (the request's oldObject). */
  delete?: (object: T, context: AdmissionContext<T>) => Warnings | Promise<Warnings>;
}

/** Changes the object in place, or returns the defaulted object. */
export type DefaultingHandler<T = unknown> = (object: T, context: AdmissionContext<T>) => T | void | Promise<T | void>;

/** What happened to a handler that failed other than by AdmissionDenied: logged by the caller. */
export type HandlerFailure = (error: unknown, request: AdmissionRequest) => void;

/**
 * Runs the validator for the request's operation. Returned warnings allow; AdmissionDenied
 * denies with its message and code; any other error denies with 500 (the handler broke,
 * which is not a verdict on the object) and goes to `onFailure`. An operation without a
 * handler (CONNECT, or one the configuration should not have sent) is allowed.
 */
export async function validate<T>(
  handlers: ValidationHandlers<T>,
  request: AdmissionRequest<T>,
  onFailure: HandlerFailure = () => {},
): Promise<AdmissionResponse> {
  const context = contextOf(request);
  return verdict(request, onFailure, async () => {
    switch (request.operation) {
      case 'CREATE':
        return handlers.create?.(request.object as T, context);
      case 'UPDATE':
        return handlers.update?.(request.object as T, request.oldObject as T, context);
      case 'DELETE':
        return handlers.delete?.(request.oldObject as T, context);
      default:
        return undefined;
    }
  });
}

/**
 * Runs the defaulter on a copy of the object and answers with the JSON Patch from the
 * object as sent to the result. DELETE and CONNECT carry no object to default: allowed,
 * no patch (a patch on DELETE is an error in the API server).
 */
export async function mutate<T>(
  handler: DefaultingHandler<T>,
  request: AdmissionRequest<T>,
  onFailure: HandlerFailure = () => {},
): Promise<AdmissionResponse> {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { uid: request.uid, allowed: true };
  // The copy and the diff recurse: a caller other than the server (whose scanner refuses
  // such a review unparsed) gets the same denial instead of a stack overflow.
  if (nestsDeeperThan(request.object, MAX_OBJECT_DEPTH) || nestsDeeperThan(request.oldObject, MAX_OBJECT_DEPTH)) {
    return {
      uid: request.uid,
      allowed: false,
      status: {
        code: 400,
        reason: 'BadRequest',
        message: `the object nests objects and arrays more than ${MAX_OBJECT_DEPTH} deep (MAX_OBJECT_DEPTH): no Kubernetes object needs that; refused`,
      },
    };
  }
  let patch: ReturnType<typeof jsonPatch> = [];
  const response = await verdict(request, onFailure, async () => {
    const copy = structuredClone(request.object) as T;
    const returned = await handler(copy, contextOf(request));
    patch = jsonPatch(request.object, returned ?? copy);
  });
  if (!response.allowed || patch.length === 0) return response;
  return {
    ...response,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
  };
}

async function verdict(
  request: AdmissionRequest,
  onFailure: HandlerFailure,
  run: () => Promise<Warnings>,
): Promise<AdmissionResponse> {
  try {
    const warnings = await run();
    return { uid: request.uid, allowed: true, ...(warnings?.length ? { warnings } : {}) };
  } catch (error) {
    if (error instanceof AdmissionDenied) {
      return {
        uid: request.uid,
        allowed: false,
        status: { code: error.code, message: error.message, ...(error.reason ? { reason: error.reason } : {}) },
        ...(error.warnings.length ? { warnings: error.warnings } : {}),
      };
    }
    onFailure(error, request);
    return {
      uid: request.uid,
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: `the webhook failed: ${(error as Error)?.message ?? String(error)}`,
      },
    };
  }
}

function contextOf<T>(request: AdmissionRequest<T>): AdmissionContext<T> {
  return {
    operation: request.operation,
    dryRun: request.dryRun === true,
    userInfo: request.userInfo,
    ...(request.oldObject ? { oldObject: request.oldObject } : {}),
    ...(request.name !== undefined ? { name: request.name } : {}),
    ...(request.namespace !== undefined ? { namespace: request.namespace } : {}),
    request,
  };
}
