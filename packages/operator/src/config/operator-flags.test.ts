import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  bindAddress,
  OPERATOR_FLAG_NAMES,
  readOperatorFlags,
  withOperatorFlags,
  type BindAddress,
  type OperatorFlags,
} from './operator-flags.js';

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
      /--metrics-bind-address=8443 is not a bind address: use host:port \(an IP address or a DNS name\), :port for every interface, or 0/,
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

describe('operator flags, properties', () => {
  // Each field's flag and variable, and what it holds.
  const FIELDS: ReadonlyArray<readonly [keyof OperatorFlags, 'string' | 'boolean' | 'address' | 'port']> = [
    ['kubeconfig', 'string'],
    ['namespace', 'string'],
    ['leaderElect', 'boolean'],
    ['leaderElectionId', 'string'],
    ['leaderElectionNamespace', 'string'],
    ['metrics', 'address'],
    ['metricsSecure', 'boolean'],
    ['metricsCertDir', 'string'],
    ['health', 'address'],
    ['webhookPort', 'port'],
    ['webhookCertDir', 'string'],
    ['webhookCertificates', 'string'],
    ['webhookSecretName', 'string'],
    ['webhookServiceName', 'string'],
    ['webhookConfigurationName', 'string'],
    ['webhookConversionCrds', 'string'],
  ];
  const names = (field: keyof OperatorFlags) => OPERATOR_FLAG_NAMES[FIELDS.findIndex(([f]) => f === field)]!;

  const host = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.domain(),
    fc.constantFrom('localhost', '0.0.0.0', '::', 'fe80::1%eth0'),
  );
  const address: fc.Arbitrary<BindAddress> = fc.oneof(
    fc.constant({ port: 0 }),
    fc.record({ host, port: fc.integer({ min: 0, max: 65535 }) }),
    fc.record({ port: fc.integer({ min: 1, max: 65535 }) }),
  );
  const valueOf = {
    string: fc.string({ minLength: 1 }),
    boolean: fc.boolean(),
    address,
    port: fc.integer({ min: 0, max: 65535 }),
  };
  const flags = fc.record(
    Object.fromEntries(FIELDS.map(([field, kind]) => [field, valueOf[kind] as fc.Arbitrary<unknown>])),
    { requiredKeys: [] },
  ) as fc.Arbitrary<OperatorFlags>;

  /** A value as a deployment writes it. */
  function printed(value: unknown, kind: string): string {
    if (kind !== 'address') return String(value);
    const { host: h, port } = value as BindAddress;
    if (h === undefined) return port === 0 ? '0' : `:${port}`;
    return h.includes(':') ? `[${h}]:${port}` : `${h}:${port}`;
  }

  it('a parsed value round-trips when printed back as a flag, in either spelling, or as a variable', () => {
    fc.assert(
      fc.property(flags, fc.boolean(), (given, separated) => {
        const argv: string[] = [];
        const env: Record<string, string> = {};
        for (const [field, kind] of FIELDS) {
          const value = given[field];
          if (value === undefined) continue;
          const { flag, variable } = names(field);
          const text = printed(value, kind);
          if (kind === 'boolean' && value === true && separated) argv.push(flag);
          else if (separated && kind !== 'boolean' && !text.startsWith('--')) argv.push(flag, text);
          else argv.push(`${flag}=${text}`);
          if (variable !== 'KUBECONFIG') env[variable] = text;
        }
        // fast-check may build records without a prototype: compare plain copies.
        const plain = (value: object) => JSON.parse(JSON.stringify(value)) as unknown;
        assert.deepEqual(readOperatorFlags(argv, {}), plain(given));
        const { kubeconfig: _, ...fromEnv } = given;
        assert.deepEqual(readOperatorFlags([], env), plain(fromEnv));
      }),
      { numRuns: 200 },
    );
  });

  // Arguments a deployment could hold: the flags, with and without values, `--`, and anything else.
  const argument = fc.oneof(
    fc.constantFrom(...OPERATOR_FLAG_NAMES.map(({ flag }) => flag), '--', '-', '--leader-elect-x', ''),
    fc
      .tuple(
        fc.constantFrom(...OPERATOR_FLAG_NAMES.map(({ flag }) => flag)),
        fc.string({ unit: 'binary', maxLength: 20 }),
      )
      .map(([flag, value]) => `${flag}=${value}`),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.constantFrom(
      '0',
      ':8443',
      '[::1]:80',
      '[',
      ']:1',
      'true',
      '99999',
      '0x10',
      '1e3',
      ' 80',
      '\n',
      'my host:80',
      'a\nb:8080',
    ),
  );
  const environment = fc.dictionary(
    fc.constantFrom(...OPERATOR_FLAG_NAMES.map(({ variable }) => variable)),
    fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom('true', '1', '0', ':80', 'x'.repeat(10_000)),
    ),
  );
  const REFUSAL = /^(--[a-z-]+|[A-Z_]+)(=.+?)? (is not a (boolean|port number|bind address)|needs a value)[:(\s].+$/;

  it('arbitrary argv and environment: parsed, or refused with one clear line naming the flag', () => {
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 12 }), environment, (argv, env) => {
        let parsed: OperatorFlags;
        try {
          parsed = readOperatorFlags(argv, env);
        } catch (error) {
          assert.equal((error as Error).constructor, Error);
          assert.match((error as Error).message, REFUSAL);
          assert.ok((error as Error).message.length < 300, 'the value is cut');
          return;
        }
        for (const [field, kind] of FIELDS) {
          const value = parsed[field];
          if (value === undefined) continue;
          if (kind === 'port') assert.ok(Number.isInteger(value) && (value as number) <= 65535);
          if (kind === 'address') {
            const { port, host: h } = value as BindAddress;
            assert.ok(Number.isInteger(port) && port >= 0 && port <= 65535);
            if (h !== undefined) assert.match(h, /^[\w.:%-]+$/, 'a host to listen on, no spaces or controls');
          }
        }
        // What the module makes of them: options, or one of its two documented refusals.
        try {
          withOperatorFlags({}, parsed);
        } catch (error) {
          assert.match(
            (error as Error).message,
            /^(leader election is switched on|--webhook-certificates \(WEBHOOK_CERTIFICATES\) is )/,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('lists no empty CRD name, whatever the commas', () => {
    const options = withOperatorFlags({}, { webhookConversionCrds: ' a.example.com,, ,b.example.com,' });
    assert.deepEqual(options.webhooks?.selfManaged?.conversionCustomResourceDefinitions, [
      'a.example.com',
      'b.example.com',
    ]);
  });

  it('shows an unprintable or long value quoted and cut', () => {
    assert.throws(() => readOperatorFlags([], { LEADER_ELECT: 'yes\nno' }), {
      message: 'LEADER_ELECT="yes\\nno" is not a boolean: use true or false',
    });
    assert.throws(() => readOperatorFlags([], { WEBHOOK_PORT: '9'.repeat(1000) }), {
      message: `WEBHOOK_PORT="${'9'.repeat(80)}" (1000 characters) is not a port number (0-65535; 0 turns it off)`,
    });
    assert.throws(
      () => bindAddress('my host:80', '--metrics-bind-address'),
      /^Error: --metrics-bind-address="my host:80" is not a bind address/,
    );
  });
});
