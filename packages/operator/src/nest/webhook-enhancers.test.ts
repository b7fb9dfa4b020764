// What Nest's enhancer pipeline does with a webhook handler's denial, without an API server:
// a denial is a verdict, so it is not logged as a failure; the handler's own filters and
// interceptors still see it, and another error is still logged as Nest logs it.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Catch,
  ForbiddenException,
  Injectable,
  Logger,
  UseFilters,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type LoggerService,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_GUARD, ExternalContextCreator, ModulesContainer } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { catchError, type Observable } from 'rxjs';
import { AdmissionDenied } from '../webhooks/admission-denied.js';
import { WebhookEnhancers } from './webhook-enhancers.js';

/** Every line logged at error level, by context. */
const errors: string[] = [];
const capture: LoggerService = {
  log: () => {},
  warn: () => {},
  error: (message: unknown, ...rest: unknown[]) => errors.push([message, ...rest].map(String).join(' ')),
};

const seenByInterceptor: unknown[] = [];

@Injectable()
class Observer implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        seenByInterceptor.push(error);
        throw error;
      }),
    );
  }
}

/** Turns one denial into warnings, as a user's filter may. */
@Catch(AdmissionDenied)
class Lenient implements ExceptionFilter {
  catch(denial: AdmissionDenied): string[] | undefined {
    return denial.message === 'tolerated' ? ['tolerated by a filter'] : undefined;
  }
}

@Injectable()
@UseInterceptors(Observer)
class SizeWebhook {
  create(size: number): string[] {
    if (size > 5) throw new AdmissionDenied(`size ${size} is over 5`, { code: 422 });
    if (size < 0) throw new TypeError('size is negative');
    return [];
  }

  @UseFilters(Lenient)
  update(message: string): void {
    throw new AdmissionDenied(message);
  }
}

let moduleRef: TestingModule;

for (const inheritAppConfig of [false, true]) {
  describe(`a webhook handler run through its enhancers (inheritAppConfig: ${inheritAppConfig})`, () => {
    let enhancers: WebhookEnhancers;
    let instance: SizeWebhook;

    before(async () => {
      // The testing module puts its logger in place as Nest's static one, which Nest's exception handler logs to.
      moduleRef = await Test.createTestingModule({ providers: [SizeWebhook, Observer] })
        .setLogger(capture)
        .compile();
      enhancers = new WebhookEnhancers(
        moduleRef.get(ModulesContainer),
        moduleRef.get(ExternalContextCreator),
        inheritAppConfig,
      );
      instance = moduleRef.get(SizeWebhook);
    });

    after(async () => {
      await moduleRef.close();
      Logger.overrideLogger(true);
    });

    it('throws a denial on as it is, and logs nothing: a denial is a verdict, not a failure', async () => {
      errors.length = 0;
      seenByInterceptor.length = 0;
      const create = enhancers.wrap<(size: number) => Promise<string[]>>(instance, 'create');
      const denial = await create(9).then(
        () => assert.fail('the handler allowed size 9'),
        (error: unknown) => error,
      );
      assert.ok(denial instanceof AdmissionDenied);
      assert.equal(denial.message, 'size 9 is over 5');
      assert.equal(denial.code, 422);
      assert.deepEqual(errors, [], 'a denial was logged as an error');
      assert.deepEqual(seenByInterceptor, [denial], 'the interceptor saw the denial itself');
      assert.deepEqual(await create(1), []);
    });

    it('lets the handler’s own filter catch a denial first', async () => {
      errors.length = 0;
      const update = enhancers.wrap<(message: string) => Promise<unknown>>(instance, 'update');
      assert.deepEqual(await update('tolerated'), ['tolerated by a filter']);
      await assert.rejects(update('refused'), (error: unknown) => error instanceof AdmissionDenied);
      assert.deepEqual(errors, []);
    });

    it('still logs a handler that broke, as Nest logs any error', async () => {
      errors.length = 0;
      const create = enhancers.wrap<(size: number) => Promise<string[]>>(instance, 'create');
      await assert.rejects(create(-1), TypeError);
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, /size is negative/);
    });
  });
}

/** An app-wide guard written for HTTP callers: it refuses everything else. */
@Injectable()
class HttpOnly implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

describe('app-wide enhancers', () => {
  it('stay out of a webhook handler unless inheritAppConfig, as a hybrid app’s second transport', async () => {
    const appModule = await Test.createTestingModule({
      providers: [SizeWebhook, Observer, { provide: APP_GUARD, useClass: HttpOnly }],
    }).compile();
    try {
      const wrapped = (inheritAppConfig: boolean) =>
        new WebhookEnhancers(
          appModule.get(ModulesContainer),
          appModule.get(ExternalContextCreator),
          inheritAppConfig,
        ).wrap<(size: number) => Promise<string[]>>(appModule.get(SizeWebhook), 'create');
      assert.deepEqual(await wrapped(false)(1), []);
      await assert.rejects(wrapped(true)(1), (error: unknown) => {
        assert.ok(error instanceof AdmissionDenied, `not a denial: ${String(error)}`);
        assert.equal(error.code, new ForbiddenException().getStatus());
        return true;
      });
    } finally {
      await appModule.close();
    }
  });
});
