import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { httpEndpoints } from './http-endpoints.js';

describe('httpEndpoints', () => {
  it('serves /metrics over HTTPS with authentication on 0.0.0.0:8443, and the probes on 0.0.0.0:8081, by default', () => {
    assert.deepEqual(httpEndpoints({}), {
      metrics: { port: 8443, host: '0.0.0.0', secure: true, auth: true },
      health: { port: 8081, host: '0.0.0.0' },
    });
  });

  it('takes each host, the plain-HTTP switch and the certificate directory', () => {
    assert.deepEqual(
      httpEndpoints({
        metrics: { port: 9443, host: '10.0.0.5', certDir: '/certs', certName: 'c.pem', keyName: 'k.pem' },
        health: { port: 9440, host: '127.0.0.1' },
      }),
      {
        metrics: {
          port: 9443,
          host: '10.0.0.5',
          secure: true,
          auth: true,
          certDir: '/certs',
          certName: 'c.pem',
          keyName: 'k.pem',
        },
        health: { port: 9440, host: '127.0.0.1' },
      },
    );
    assert.deepEqual(httpEndpoints({ metrics: { secure: false } }).metrics, {
      port: 8080,
      host: '0.0.0.0',
      secure: false,
      auth: false,
    });
    assert.equal(httpEndpoints({ metrics: { auth: false } }).metrics?.auth, false);
  });

  it('leaves out what port 0 turns off', () => {
    assert.deepEqual(httpEndpoints({ metrics: { port: 0 }, health: { port: 0 } }), {});
  });

  it('lets plain-HTTP metrics share the probes’ port, not HTTPS ones', () => {
    const shared = httpEndpoints({ metrics: { port: 9000, secure: false }, health: { port: 9000 } });
    assert.equal(shared.metrics?.port, shared.health?.port);
    assert.throws(
      () => httpEndpoints({ metrics: { port: 9000 }, health: { port: 9000 } }),
      /metrics\.port and health\.port are both 9000, but \/metrics is served over HTTPS and the probes over plain HTTP.*different ports/,
    );
    assert.throws(
      () => httpEndpoints({ metrics: { port: 9000, secure: false, host: '127.0.0.1' }, health: { port: 9000 } }),
      /share port 9000 but name different hosts \(127\.0\.0\.1, 0\.0\.0\.0\)/,
    );
  });

  it('refuses settings that cannot work, saying what to change', () => {
    assert.throws(() => httpEndpoints({ metrics: { secure: false, auth: true } }), /metrics\.auth needs HTTPS/);
    assert.throws(
      () => httpEndpoints({ metrics: { secure: false, certDir: '/certs' } }),
      /metrics\.certDir is only used over HTTPS/,
    );
    assert.throws(() => httpEndpoints({ metrics: { port: 70_000 } }), /metrics\.port 70000 is not a port number/);
    assert.throws(
      () => httpEndpoints({ health: { port: -1 } }),
      /health\.port -1 is not a port number.*0 to turn the probes off/,
    );
  });
});
