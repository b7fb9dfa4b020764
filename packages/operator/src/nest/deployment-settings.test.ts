import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OPERATOR_VARIABLES } from '../manifests/operator-settings.js';
import { deploymentSettings, webhookServerSettings } from './deployment-settings.js';
import { OPERATOR_FLAG_NAMES } from '../config/operator-flags.js';

describe('deploymentSettings', () => {
  it('takes what the module’s forRoot() options set, and leaves their variables out', () => {
    const { settings, notes } = deploymentSettings({
      from: 'static',
      options: {
        metrics: { port: 9443 },
        health: { port: 9090 },
        namespace: 'pools',
        leaderElection: { id: 'pools-lease' },
        shutdownGraceMs: 50_000,
      },
    });
    assert.deepEqual(settings, {
      metricsPort: 9443,
      metricsSecure: true,
      metricsAuth: true,
      healthPort: 9090,
      watchNamespace: 'pools',
      leaderElection: { id: 'pools-lease' },
      shutdownGraceMs: 50_000,
      setByModule: ['metrics', 'health', 'watchNamespace', 'leaderElection'],
    });
    assert.deepEqual(notes, []);
  });

  it('runs a sharded module as several replicas (3 unless its sharding option says)', () => {
    const sharded = (sharding: boolean | { replicas: number }) =>
      deploymentSettings({ from: 'static', options: { leaderElection: { id: 'pools' }, sharding } }).settings
        .shardReplicas;
    assert.equal(sharded(true), 3);
    assert.equal(sharded({ replicas: 5 }), 5);
    assert.equal(deploymentSettings({ from: 'static', options: {} }).settings.shardReplicas, undefined);
  });

  it('passes the module’s storage-version migration setting, when it makes one', () => {
    const migration = (migrateStorageVersions?: boolean | { writesPerSecond: number }) =>
      deploymentSettings({
        from: 'static',
        options: migrateStorageVersions === undefined ? {} : { migrateStorageVersions },
      }).settings.storageMigration;
    assert.equal(migration(), undefined);
    assert.equal(migration(true), true);
    assert.equal(migration({ writesPerSecond: 10 }), true);
    assert.equal(migration(false), false);
  });

  it('fills in from the command line what the module leaves to the flags', () => {
    const { settings } = deploymentSettings(
      { from: 'static', options: { metrics: { secure: false } } },
      { metricsPort: 8080, healthPort: 9090, watchNamespace: 'pools' },
    );
    assert.deepEqual(settings, {
      metricsPort: 8080,
      metricsSecure: false,
      metricsAuth: false,
      healthPort: 9090,
      watchNamespace: 'pools',
      setByModule: [],
    });
  });

  it('refuses a flag the module’s own option would override at run time, naming both', () => {
    assert.throws(
      () => deploymentSettings({ from: 'static', options: { metrics: { port: 9443 } } }, { metricsPort: 8443 }),
      /--metrics-port 8443, but the module's OperatorModule.forRoot\(\) sets metrics.port to 9443, which wins over the flag/,
    );
    assert.throws(
      () => deploymentSettings({ from: 'static', options: { namespace: 'a' } }, { watchNamespace: 'b' }),
      /--watch-namespace b, .* sets namespace to a/,
    );
    // The same value is no conflict.
    assert.equal(
      deploymentSettings({ from: 'static', options: { health: { port: 8081 } } }, { healthPort: 8081 }).settings
        .healthPort,
      8081,
    );
  });

  it('follows the framework’s defaults, with no variables, when the module reads no flags', () => {
    const { settings } = deploymentSettings({ from: 'static', options: { readFlags: false } });
    assert.deepEqual(settings, {
      metricsPort: 8443,
      metricsSecure: true,
      metricsAuth: true,
      healthPort: 8081,
      leaderElection: false,
      setByModule: 'all',
    });
    assert.throws(
      () => deploymentSettings({ from: 'static', options: { readFlags: false } }, { healthPort: 9000 }),
      /readFlags: false, so the operator reads no flags/,
    );
  });

  it('passes everything as variables when forRootAsync() builds the options at start-up, and says so', () => {
    const { settings, notes } = deploymentSettings({ from: 'runtime' }, { metricsPort: 9443 });
    assert.deepEqual(settings, { metricsPort: 9443 });
    assert.match(notes[0]!, /forRootAsync\(\) builds its options at start-up/);
  });

  it('writes only variables the operator reads (operator-flags.ts)', () => {
    const read = new Set(OPERATOR_FLAG_NAMES.map((f) => f.variable));
    for (const variable of Object.values(OPERATOR_VARIABLES)) assert.ok(read.has(variable), variable);
  });
});

describe('webhookServerSettings', () => {
  const settings = (
    options: Record<string, unknown>,
    request: { certificates?: 'cert-manager' | 'self-managed' } = {},
  ) => webhookServerSettings({ from: 'static', options }, { namespace: 'ops', ...request });

  it('takes the port and the self-managed names the module sets, and its certificate mode', () => {
    assert.deepEqual(
      settings({
        webhooks: { port: 10443, certificates: 'self-managed', selfManaged: { configurationName: 'hooks' } },
      }),
      { certificates: 'self-managed', server: { port: 10443, configurationName: 'hooks' } },
    );
    assert.deepEqual(settings({}, { certificates: 'self-managed' }), { certificates: 'self-managed', server: {} });
    assert.deepEqual(webhookServerSettings({ from: 'runtime' }, { namespace: 'ops' }), { server: {} });
  });

  it('without flags, names what the operator defaults to, since it reads no variable', () => {
    assert.deepEqual(settings({ readFlags: false, webhooks: { certificates: 'self-managed' } }), {
      certificates: 'self-managed',
      server: {
        secretName: 'webhook-server-cert',
        serviceName: 'webhook-service',
        configurationName: 'nestor-webhooks',
      },
    });
    assert.deepEqual(settings({ readFlags: false }), { certificates: 'cert-manager', server: {} });
  });

  it('refuses a mode or a namespace the operator would not follow', () => {
    assert.throws(
      () => settings({ webhooks: { certificates: 'files' } }, { certificates: 'self-managed' }),
      /--webhook-certificates self-managed, but the module's OperatorModule.forRoot\(\) sets webhooks.certificates to files/,
    );
    assert.throws(
      () => settings({ readFlags: false }, { certificates: 'self-managed' }),
      /has readFlags: false, so the operator reads its certificate from files/,
    );
    assert.throws(
      () => settings({ webhooks: { certificates: 'self-managed', selfManaged: { namespace: 'elsewhere' } } }),
      /keeps its webhook certificate in the namespace elsewhere .* but the operator runs in ops/,
    );
  });
});
