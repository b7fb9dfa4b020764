import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { runtimeLogger } from './nest-logger.js';
import { jsonLine } from './json-line-logger.js';
import { operatorLogger } from './operator.logger.js';

/** What the logger writes to stdout and stderr while `run` runs. */
function captured(run: () => void): string[] {
  const lines: string[] = [];
  const [out, err] = [process.stdout.write, process.stderr.write];
  const capture = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stdout.write = capture;
  process.stderr.write = capture;
  try {
    run();
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  return lines.join('').split('\n').filter(Boolean);
}

describe('operatorLogger', () => {
  it('writes JSON lines off a terminal, the runtime’s fields at the top level', () => {
    Logger.overrideLogger(operatorLogger({}, {}, false));
    try {
      const lines = captured(() =>
        runtimeLogger('Reconciler').info('reconciled', { controller: 'memcached', name: 'a' }),
      );
      assert.equal(lines.length, 1);
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      assert.equal(line['message'], 'reconciled');
      assert.equal(line['context'], 'Reconciler');
      assert.equal(line['controller'], 'memcached');
      assert.equal(line['name'], 'a');
    } finally {
      Logger.overrideLogger(true);
    }
  });

  it('writes text on a terminal, and takes LOG_FORMAT and LOG_LEVEL from the environment', () => {
    Logger.overrideLogger(operatorLogger({}, { LOG_FORMAT: 'text', LOG_LEVEL: 'warn' }, false));
    try {
      const lines = captured(() => {
        new Logger('T').log('hidden at warn');
        new Logger('T').warn('shown');
      });
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /WARN.*\[T\].*shown/);
      assert.throws(() => JSON.parse(lines[0]!));
    } finally {
      Logger.overrideLogger(true);
    }
    assert.throws(() => operatorLogger({}, { LOG_FORMAT: 'yaml' }), /LOG_FORMAT=yaml is not one of json, text/);
  });

  it('writes one JSON line per call: a stack, an Error, fields that do not replace its own keys', () => {
    const stack = 'Error: boom\n    at reconcile (/app/dist/x.js:1:2)';
    const failed = JSON.parse(jsonLine('error', 'reconcile failed', [stack, 'Reconciler'])) as Record<string, unknown>;
    assert.deepEqual(
      { message: failed['message'], context: failed['context'], stack: failed['stack'], level: failed['level'] },
      { message: 'reconcile failed', context: 'Reconciler', stack, level: 'error' },
    );
    const thrown = JSON.parse(jsonLine('error', new TypeError('bad'), [{ name: 'a' }], 'Ctx')) as Record<
      string,
      unknown
    > & {
      error: { name: string };
    };
    assert.equal(thrown['message'], 'bad');
    assert.equal(thrown['context'], 'Ctx');
    assert.equal(thrown['error'].name, 'TypeError');
    assert.equal(thrown['name'], 'a');
    const collide = JSON.parse(jsonLine('log', 'm', [{ message: 'x', level: 'fatal', size: 10n }, 7, 'C'])) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      { message: collide['message'], level: collide['level'], size: collide['size'], details: collide['details'] },
      { message: 'm', level: 'log', size: '10', details: [7] },
    );
    // A string after the message alone is its context, as Nest's Logger passes it.
    assert.equal((JSON.parse(jsonLine('warn', 'w', ['Ctx'])) as Record<string, unknown>)['context'], 'Ctx');
  });
});
