import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bindAddress, readOperatorFlags, withOperatorFlags } from './operator-flags.js';

describe('readOperatorFlags', () => {
  it('reads kubebuilder’s flags, in both spellings, leaving the application’s arguments alone', () => {
    const flags = readOperatorFlags(
      [
        '--leader-elect',
        '--metrics-bind-address=:8443',
        '--health-probe-bind-address',
        '127.0.0.1:9000',
        '--app-flag=x',
      ],
      {},
    );
    assert.deepEqual(flags, {
      leaderElect: true,
      metrics: { port: 8443 },
      health: { host: '127.0.0.1', port: 9000 },
    });
  });

  it('falls back to the environment, a flag winning over its variable', () => {
    const flags = readOperatorFlags(['--metrics-secure=false'], {
      METRICS_SECURE: 'true',
      LEADER_ELECT: 'true',
      LEADER_ELECTION_ID: 'my-operator',
      WATCH_NAMESPACE: 'prod',
      WEBHOOK_PORT: '10443',
      KUBECONFIG: '/ignored', // the kubeconfig search reads it
    });
    assert.deepEqual(flags, {
      namespace: 'prod',
      leaderElect: true,
      leaderElectionId: 'my-operator',
      metricsSecure: false,
      webhookPort: 10443,
    });
  });

  it('says what is wrong with a value and what it takes', () => {
    assert.throws(
      () => readOperatorFlags([], { LEADER_ELECT: 'yes' }),
      /LEADER_ELECT=yes is not a boolean: use true or false/,
    );
    assert.throws(
      () => readOperatorFlags(['--metrics-bind-address=8443'], {}),
      /--metrics-bind-address=8443 is not a bind address: use host:port, :port for every interface, or 0/,
    );
    assert.throws(() => readOperatorFlags([], { WEBHOOK_PORT: '70000' }), /WEBHOOK_PORT=70000 is not a port number/);
    assert.throws(() => readOperatorFlags(['--namespace'], {}), /--namespace needs a value/);
  });
});

describe('bindAddress', () => {
  it('takes Go’s listen addresses: :port, host:port, [v6]:port, and 0 for off', () => {
    assert.deepEqual(bindAddress(':8080'), { port: 8080 });
    assert.deepEqual(bindAddress('0.0.0.0:8443'), { host: '0.0.0.0', port: 8443 });
    assert.deepEqual(bindAddress('[::1]:8081'), { host: '::1', port: 8081 });
    assert.deepEqual(bindAddress('0'), { port: 0 });
  });
});

describe('withOperatorFlags', () => {
  it('fills only what the module’s options leave out', () => {
    const options = withOperatorFlags(
      { namespace: 'code', metrics: { secure: false } },
      { namespace: 'flag', metrics: { port: 0 }, metricsSecure: true, health: { host: '127.0.0.1', port: 9000 } },
    );
    assert.deepEqual(options, {
      namespace: 'code',
      metrics: { secure: false, port: 0 },
      health: { port: 9000, host: '127.0.0.1' },
    });
  });

  it('turns leader election on from the flags, and asks for the Lease’s name when it is missing', () => {
    assert.deepEqual(
      withOperatorFlags({}, { leaderElect: true, leaderElectionId: 'op', leaderElectionNamespace: 'ops' }),
      {
        leaderElection: { id: 'op', namespace: 'ops' },
      },
    );
    assert.throws(() => withOperatorFlags({}, { leaderElect: true }), /set --leader-election-id or LEADER_ELECTION_ID/);
    // The module's own leader election stands, whatever the flags say.
    assert.deepEqual(withOperatorFlags({ leaderElection: { id: 'code' } }, { leaderElect: false }), {
      leaderElection: { id: 'code' },
    });
  });
});

describe('withOperatorFlags: self-managed webhook certificates', () => {
  it('takes the mode and the names nestor manifests puts in the Deployment, the code’s winning', () => {
    const flags = readOperatorFlags([], {
      WEBHOOK_CERTIFICATES: 'self-managed',
      WEBHOOK_SECRET_NAME: 'op-webhook-server-cert',
      WEBHOOK_SERVICE_NAME: 'op-webhook-service',
      WEBHOOK_CONFIGURATION_NAME: 'op-webhooks',
      WEBHOOK_CONVERSION_CRDS: 'a.example.com, b.example.com',
    });
    assert.deepEqual(withOperatorFlags({ webhooks: { selfManaged: { secretName: 'code' } } }, flags).webhooks, {
      certificates: 'self-managed',
      selfManaged: {
        secretName: 'code',
        serviceName: 'op-webhook-service',
        configurationName: 'op-webhooks',
        conversionCustomResourceDefinitions: ['a.example.com', 'b.example.com'],
      },
    });
    assert.throws(
      () => withOperatorFlags({}, { webhookCertificates: 'cert-manager' }),
      /WEBHOOK_CERTIFICATES\) is cert-manager: use files \(cert-manager's mounted Secret\) or self-managed/,
    );
  });
});
