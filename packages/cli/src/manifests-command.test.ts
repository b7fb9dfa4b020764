import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { run } from './cli.js';
import fc from 'fast-check';
import { UsageError, type CommandIo } from './command-io.js';
import { parseManifestsArguments } from './manifests-arguments.js';
import { manifestsCommand } from './manifests-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, 'fixtures', 'app.module.js');

/** Runs a command line in-process, capturing its output. */
async function capture(command: (argv: string[], io: CommandIo) => Promise<number>, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await command(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: here,
  });
  return { code, stdout, stderr };
}

describe('parseManifestsArguments', () => {
  it('derives the name from the package.json near the module, and the namespace and image from the name', () => {
    assert.deepEqual(parseManifestsArguments(['--module', fixture], here), {
      module: fixture,
      name: 'cli',
      namespace: 'cli-system',
      image: 'cli:latest',
    });
    assert.deepEqual(
      parseManifestsArguments(
        [
          '--module',
          'm.js',
          '--export',
          'Root',
          '--out',
          'k8s',
          '--name',
          'op',
          '--namespace',
          'ops',
          '--image',
          'r/op:1',
          '--create-namespace',
        ],
        here,
      ),
      {
        module: 'm.js',
        export: 'Root',
        out: 'k8s',
        name: 'op',
        namespace: 'ops',
        createNamespace: true,
        image: 'r/op:1',
      },
    );
    assert.equal(parseManifestsArguments(['--help'], here), 'help');
  });

  it('refuses a missing module, unknown options and names Kubernetes would refuse', () => {
    assert.throws(
      () => parseManifestsArguments([], here),
      (e: unknown) => e instanceof UsageError && /--module is required/.test(e.message),
    );
    assert.throws(() => parseManifestsArguments(['--module', 'm.js', '--bogus'], here), UsageError);
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--name', 'My_Operator'], here),
      /--name "My_Operator" is not a valid Kubernetes name/,
    );
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--name', 'op', '--namespace', 'x'.repeat(64)], here),
      /--namespace/,
    );
  });

  it('takes the ports, the watched namespace, a ServiceMonitor and metrics readers', () => {
    const args = parseManifestsArguments(
      [
        '--module',
        'm.js',
        '--metrics-port',
        '9443',
        '--health-port',
        '0',
        '--watch-namespace',
        'pools',
        '--service-monitor',
        '--metrics-reader',
        'monitoring/prometheus-k8s',
        '--metrics-reader',
        'obs/scraper',
      ],
      here,
    );
    assert.ok(args !== 'help');
    assert.equal(args.metricsPort, 9443);
    assert.equal(args.healthPort, 0);
    assert.equal(args.watchNamespace, 'pools');
    assert.equal(args.serviceMonitor, true);
    assert.deepEqual(args.metricsReaders, ['monitoring/prometheus-k8s', 'obs/scraper']);
    for (const [argv, message] of [
      [['--metrics-port', 'https'], /--metrics-port https is not a port number/],
      [['--health-port', '70000'], /--health-port 70000 is not a port number/],
      [['--metrics-port', '8081', '--health-port', '8081'], /both 8081/],
      [['--watch-namespace', 'Pools'], /--watch-namespace "Pools" is not a valid Kubernetes name/],
      [['--metrics-reader', 'prometheus'], /--metrics-reader prometheus: name a ServiceAccount as <namespace>\/<name>/],
    ] as const) {
      assert.throws(() => parseManifestsArguments(['--module', 'm.js', ...argv], here), message);
    }
  });

  it('takes where the metrics certificate comes from: cert-manager or self-signed', () => {
    const args = parseManifestsArguments(['--module', 'm.js', '--metrics-certificates', 'cert-manager'], here);
    assert.equal(args !== 'help' && args.metricsCertificates, 'cert-manager');
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--metrics-certificates', 'acme'], here),
      /--metrics-certificates acme: use cert-manager or self-signed/,
    );
  });

  it('takes how webhook certificates are made: cert-manager or self-managed', () => {
    const args = parseManifestsArguments(['--module', 'm.js', '--webhook-certificates', 'self-managed'], here);
    assert.equal(args !== 'help' && args.webhookCertificates, 'self-managed');
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--webhook-certificates', 'openssl'], here),
      /--webhook-certificates openssl: use cert-manager or self-managed/,
    );
  });
});

describe('nestor manifests', () => {
  type Doc = { kind: string; metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };

  /** Runs `nestor manifests --out` into a new folder; returns what it printed and reads what it wrote. */
  async function generate(extra: string[], out?: string) {
    const dir = out ?? (await mkdtemp(join(tmpdir(), 'nestor-manifests-')));
    const result = await capture(manifestsCommand, [
      '--module',
      fixture,
      '--out',
      dir,
      '--name',
      'gadget-op',
      '--namespace',
      'gadgets',
      '--image',
      'example/gadget:2',
      ...extra,
    ]);
    const files = () => readdirRecursive(dir);
    const docs = async (path: string) =>
      parseAllDocuments(await readFile(join(dir, path), 'utf8')).map((d) => d.toJS() as Doc);
    /** What `kubectl apply -k` or `delete -k` on the folder would touch. */
    const kustomization = async (folder: string) => {
      const { resources } = parse(await readFile(join(dir, folder, 'kustomization.yaml'), 'utf8')) as {
        resources: string[];
      };
      return (await Promise.all(resources.map((file) => docs(`${folder}/${file}`)))).flat();
    };
    return { ...result, dir, files, docs, kustomization };
  }

  it('writes the CRDs and the operator as separate kustomizations, from the module, without a cluster', async () => {
    const { code, stderr, dir, files, docs, kustomization } = await generate([]);
    try {
      assert.equal(code, 0, stderr);
      assert.match(stderr, /1 controller\(s\) in AppModule \(GadgetController\): 1 CRD\(s\), 10 RBAC object/);
      assert.deepEqual(await files(), [
        'README.md',
        'crds/crds.yaml',
        'crds/kustomization.yaml',
        'network-policy/allow-metrics-traffic.yaml',
        'network-policy/kustomization.yaml',
        'operator/deployment.yaml',
        'operator/kustomization.yaml',
        'operator/metrics.yaml',
        'operator/rbac.yaml',
      ]);
      assert.match(stderr, /the namespace gadgets must exist: kubectl create namespace gadgets/);
      assert.match(
        stderr,
        new RegExp(
          `kubectl apply -k ${dir}/crds && kubectl apply -k ${dir}/operator && kubectl apply -k ${dir}/network-policy\n`,
        ),
      );
      assert.match(stderr, new RegExp(`uninstall the operator: kubectl delete -k ${dir}/operator`));

      const [crd, ...moreCrds] = await kustomization('crds');
      assert.equal(moreCrds.length, 0);
      assert.equal(crd!.metadata.name, 'gadgets.clitest.nestor.dev');
      assert.deepEqual(
        (crd!.spec.versions as Array<{ name: string; storage: boolean }>).map((v) => [v.name, v.storage]),
        [
          ['v1', true],
          ['v1alpha1', false],
        ],
        'the version no controller names is in the CRD too',
      );

      assert.deepEqual(
        (await kustomization('operator')).map((o) => `${o.kind}/${o.metadata.name}`),
        [
          'ServiceAccount/gadget-op',
          'ClusterRole/gadget-op',
          'ClusterRoleBinding/gadget-op',
          'Role/gadget-op-leader-election',
          'RoleBinding/gadget-op-leader-election',
          'ClusterRole/gadget-op-storage-migration',
          'ClusterRoleBinding/gadget-op-storage-migration',
          'ClusterRole/gadget-op-metrics-auth',
          'ClusterRoleBinding/gadget-op-metrics-auth',
          'ClusterRole/gadget-op-metrics-reader',
          'Deployment/gadget-op',
          'Service/gadget-op-metrics-service',
        ],
        'deleting the operator deletes neither the CRDs nor the namespace',
      );
      const [deployment] = await docs('operator/deployment.yaml');
      assert.equal(deployment!.metadata.namespace, 'gadgets');
      assert.match(JSON.stringify(deployment), /"image":"example\/gadget:2"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes the Namespace with --create-namespace, in a kustomization of its own', async () => {
    const { code, stderr, dir, files, kustomization } = await generate(['--create-namespace']);
    try {
      assert.equal(code, 0, stderr);
      assert.match(stderr, /1 CRD\(s\), a Namespace, 10 RBAC object/);
      assert.deepEqual(
        (await files()).filter((path) => path.startsWith('namespace/')),
        ['namespace/kustomization.yaml', 'namespace/namespace.yaml'],
      );
      assert.deepEqual(
        (await kustomization('namespace')).map((o) => `${o.kind}/${o.metadata.name}`),
        ['Namespace/gadgets'],
      );
      assert.match(await readFile(join(dir, 'namespace', 'kustomization.yaml'), 'utf8'), /--create-namespace/);
      assert.ok(!(await kustomization('operator')).some((o) => o.kind === 'Namespace'));
      assert.doesNotMatch(stderr, /must exist/);
      assert.match(
        stderr,
        new RegExp(
          `kubectl apply -k ${dir}/crds && kubectl apply -k ${dir}/namespace && kubectl apply -k ${dir}/operator`,
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removes what an earlier run generated there and this one does not, and nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-manifests-'));
    try {
      assert.equal((await generate(['--create-namespace'], dir)).code, 0);
      // The layout before the CRDs and the operator had folders of their own.
      const generated =
        "# Generated by `nestor manifests` from the operator's decorators. Do not edit: generate again.\n";
      for (const file of ['kustomization.yaml', 'crds.yaml', 'rbac.yaml', 'deployment.yaml']) {
        await writeFile(join(dir, file), `${generated}kind: Old\n`);
      }
      await mkdir(join(dir, 'user'));
      await writeFile(join(dir, 'user', 'kustomization.yaml'), `${generated}resources: []\n`);
      await writeFile(join(dir, 'operator', 'mine.yaml'), 'kind: Mine\n');
      await writeFile(join(dir, 'mine.yaml'), `${generated}kind: Stream\n`);

      const { code, stderr, files } = await generate([], dir);
      assert.equal(code, 0, stderr);
      assert.match(
        stderr,
        /removed what an earlier nestor manifests wrote there: kustomization\.yaml, crds\.yaml, rbac\.yaml, deployment\.yaml, namespace\/kustomization\.yaml, namespace\/namespace\.yaml/,
      );
      assert.deepEqual(await files(), [
        'README.md',
        'crds/crds.yaml',
        'crds/kustomization.yaml',
        'mine.yaml',
        'network-policy/allow-metrics-traffic.yaml',
        'network-policy/kustomization.yaml',
        'operator/deployment.yaml',
        'operator/kustomization.yaml',
        'operator/metrics.yaml',
        'operator/mine.yaml',
        'operator/rbac.yaml',
        'user/kustomization.yaml',
      ]);
      assert.equal(await readFile(join(dir, 'operator', 'mine.yaml'), 'utf8'), 'kind: Mine\n');
      assert.match(await readFile(join(dir, 'mine.yaml'), 'utf8'), /kind: Stream/);
      assert.match(await readFile(join(dir, 'user', 'kustomization.yaml'), 'utf8'), /resources/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints one YAML stream without --out, for kubectl apply -f -, with the Namespace only if asked', async () => {
    const kindsOf = async (extra: string[]) => {
      const { code, stdout } = await capture(manifestsCommand, ['--module', fixture, '--name', 'gadget-op', ...extra]);
      assert.equal(code, 0);
      return parseAllDocuments(stdout).map((d) => (d.toJS() as { kind: string }).kind);
    };
    const operator = [
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'Deployment',
      'Service',
      'NetworkPolicy',
    ];
    assert.deepEqual(await kindsOf([]), ['CustomResourceDefinition', ...operator]);
    assert.deepEqual(await kindsOf(['--create-namespace']), ['CustomResourceDefinition', 'Namespace', ...operator]);
    assert.deepEqual(await kindsOf(['--no-network-policy']), ['CustomResourceDefinition', ...operator.slice(0, -1)]);
  });

  it('writes objects that agree on the ports, the watched namespace and the scrapers asked for', async () => {
    const { code, stderr, dir, files, docs } = await generate([
      '--metrics-port',
      '9443',
      '--health-port',
      '9090',
      '--watch-namespace',
      'gadget-land',
      '--service-monitor',
      '--metrics-reader',
      'monitoring/prometheus-k8s',
    ]);
    try {
      assert.equal(code, 0, stderr);
      assert.match(
        stderr,
        /RBAC object\(s\) \(the controllers' Role in gadget-land\), a Deployment, Service and ServiceMonitor for \/metrics/,
      );
      assert.ok((await files()).includes('operator/monitor.yaml'));
      const rbac = await docs('operator/rbac.yaml');
      const role = rbac.find((o) => o.kind === 'Role' && o.metadata.name === 'gadget-op');
      assert.equal(role?.metadata.namespace, 'gadget-land');
      const clusterRole = rbac.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'gadget-op');
      assert.deepEqual(
        (clusterRole as { rules?: unknown }).rules,
        [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }],
        'only the cluster-scoped kind it reads',
      );
      assert.ok(
        rbac.some((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name.endsWith('monitoring-prometheus-k8s')),
      );
      const [deployment] = await docs('operator/deployment.yaml');
      const text = JSON.stringify(deployment);
      for (const variable of [
        '{"name":"METRICS_BIND_ADDRESS","value":":9443"}',
        '{"name":"HEALTH_PROBE_BIND_ADDRESS","value":":9090"}',
        '{"name":"WATCH_NAMESPACE","value":"gadget-land"}',
        '{"name":"LEADER_ELECT","value":"true"}',
      ])
        assert.ok(text.includes(variable), variable);
      assert.ok(text.includes('{"name":"health","containerPort":9090,"protocol":"TCP"}'));
      const [service] = await docs('operator/metrics.yaml');
      assert.deepEqual(service!.spec.ports, [{ name: 'https', port: 9443, targetPort: 'metrics', protocol: 'TCP' }]);
      const readme = await readFile(join(dir, 'README.md'), 'utf8');
      assert.match(readme, /`gadget-land` must exist: the operator has a Role there/);
      assert.match(readme, /Prometheus Operator's CRDs/);
      assert.match(readme, /done for `monitoring\/prometheus-k8s`/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('grants a @Watches of the operator’s own namespace its rights there when the rest is a Role elsewhere', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-manifests-'));
    const module = join(here, 'fixtures', 'own-namespace-app.module.js');
    const args = ['--module', module, '--out', dir, '--name', 'gadget-op', '--namespace', 'gadget-system'];
    try {
      const { code, stderr } = await capture(manifestsCommand, [...args, '--watch-namespace', 'gadget-land']);
      assert.equal(code, 0, stderr);
      assert.match(stderr, /the controllers' Roles in gadget-land, gadget-system/);
      const rbac = parseAllDocuments(await readFile(join(dir, 'operator', 'rbac.yaml'), 'utf8')).map(
        (d) => d.toJS() as Doc,
      );
      const roleIn = (namespace: string) =>
        rbac.find((o) => o.kind === 'Role' && o.metadata.name === 'gadget-op' && o.metadata.namespace === namespace) as
          (Doc & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }) | undefined;
      assert.deepEqual(
        roleIn('gadget-system')?.rules.filter((rule) => !rule.resources.includes('events')),
        [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
        'the operator’s namespace: only what the @Watches reads',
      );
      assert.ok(roleIn('gadget-land')?.rules.some((rule) => rule.resources.includes('gadgets')));
      assert.ok(
        rbac.some(
          (o) =>
            o.kind === 'RoleBinding' && o.metadata.name === 'gadget-op' && o.metadata.namespace === 'gadget-system',
        ),
      );
      assert.ok(!rbac.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'gadget-op'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("grants the fleet's providers their rights, in the operator's namespace when they name none", async () => {
    const module = join(here, 'fixtures', 'fleet-app.module.js');
    const argv = ['--module', module, '--name', 'fleet-op', '--namespace', 'fleet-system'];
    const { code, stdout, stderr } = await capture(manifestsCommand, argv);
    assert.equal(code, 0, stderr);
    type Rules = { rules: Array<{ apiGroups: string[]; resources: string[] }> };
    const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Doc & Rules);
    const secrets = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'fleet-op-fleet');
    assert.equal(secrets?.metadata.namespace, 'fleet-system', "KubeconfigSecrets() reads the operator's namespace");
    assert.deepEqual(secrets?.rules[0]?.resources, ['secrets']);
    const clusters = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'fleet-op-fleet-2');
    assert.deepEqual(clusters?.rules[0], {
      apiGroups: ['cluster.x-k8s.io'],
      resources: ['clusters'],
      verbs: ['get', 'list', 'watch'],
    });
  });

  it("follows the module's forRoot() options, and refuses a flag they would override", async () => {
    const module = join(here, 'fixtures', 'configured-app.module.js');
    const { code, stdout, stderr } = await capture(manifestsCommand, ['--module', module, '--name', 'gadget-op']);
    assert.equal(code, 0, stderr);
    const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Doc & { rules?: unknown });
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    assert.equal(pod.terminationGracePeriodSeconds, 60, 'shutdownGraceMs 50 s + 10 s');
    const text = JSON.stringify(pod);
    assert.ok(text.includes('{"name":"metrics","containerPort":9443,"protocol":"TCP"}'));
    assert.ok(text.includes('{"name":"health","containerPort":9090,"protocol":"TCP"}'));
    assert.doesNotMatch(text, /METRICS_BIND_ADDRESS|HEALTH_PROBE_BIND_ADDRESS|WATCH_NAMESPACE|LEADER_ELECT/);
    assert.equal(
      objects.find((o) => o.kind === 'Role' && o.metadata.name === 'gadget-op')?.metadata.namespace,
      'gadget-land',
      'the module watches one namespace: a Role there',
    );
    const conflict = await capture(manifestsCommand, ['--module', module, '--metrics-port', '8443']);
    assert.equal(conflict.code, 1);
    assert.match(
      conflict.stderr,
      /--metrics-port 8443, but the module's OperatorModule.forRoot\(\) sets metrics.port to 9443/,
    );
  });

  it("follows the module's webhook port and self-managed names, in the YAML and the chart", async () => {
    const module = join(here, 'fixtures', 'webhook-options-app.module.js');
    const { code, stdout, stderr } = await capture(manifestsCommand, ['--module', module, '--name', 'gadget-op']);
    assert.equal(code, 0, stderr);
    const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Doc & { rules?: { resourceNames?: string[] }[] });
    const deployment = JSON.stringify(objects.find((o) => o.kind === 'Deployment'));
    assert.ok(deployment.includes('{"name":"webhook-server","containerPort":10443,"protocol":"TCP"}'), deployment);
    assert.ok(deployment.includes('{"name":"WEBHOOK_CONFIGURATION_NAME","value":"gadget-hooks"}'));
    assert.ok(deployment.includes('{"name":"WEBHOOK_SERVICE_NAME","value":"gadget-hooks-svc"}'));
    assert.ok(deployment.includes('{"name":"WEBHOOK_SECRET_NAME","value":"gadget-tls"}'));
    assert.doesNotMatch(deployment, /9443/);
    const configuration = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
    assert.equal(configuration.metadata.name, 'gadget-hooks');
    assert.match(JSON.stringify(configuration), /"service":\{"namespace":"gadget-op-system","name":"gadget-hooks-svc"/);
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'gadget-hooks-svc');
    assert.ok(service, 'the Service the certificate names');
    const injector = objects.find(
      (o) => o.kind === 'ClusterRole' && o.metadata.name === 'gadget-op-webhook-ca-injector',
    )!;
    assert.deepEqual(injector.rules?.[0]?.resourceNames, ['gadget-hooks']);
    const policies = JSON.stringify(objects.filter((o) => o.kind === 'NetworkPolicy'));
    assert.match(policies, /"port":10443/);
    assert.doesNotMatch(policies, /9443/);

    const chart = await mkdtemp(join(tmpdir(), 'nestor-chart-'));
    try {
      const helm = await capture(manifestsCommand, ['--module', module, '--name', 'gadget-op', '--helm', chart]);
      assert.equal(helm.code, 0, helm.stderr);
      const templates = (await readdirRecursive(join(chart, 'templates'))).filter((f) => f.endsWith('.yaml'));
      const text = (await Promise.all(templates.map((f) => readFile(join(chart, 'templates', f), 'utf8')))).join('\n');
      assert.match(text, /containerPort: 10443/);
      assert.match(text, /name: gadget-hooks\n/);
      assert.doesNotMatch(text, /9443/);
    } finally {
      await rm(chart, { recursive: true, force: true });
    }

    const conflict = await capture(manifestsCommand, ['--module', module, '--webhook-certificates', 'cert-manager']);
    assert.equal(conflict.code, 1);
    assert.match(
      conflict.stderr,
      /--webhook-certificates cert-manager, but the module's OperatorModule.forRoot\(\) sets webhooks.certificates to self-managed/,
    );
  });

  it('explains a wrong module path, export or file type, with the usage and exit code 2', async () => {
    const missing = await capture(manifestsCommand, ['--module', 'nowhere.js']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--module nowhere\.js: no such file/);
    assert.match(missing.stderr, /Usage: nestor manifests/);
    const noExport = await capture(manifestsCommand, ['--module', fixture, '--export', 'Nope']);
    assert.equal(noExport.code, 2);
    assert.match(noExport.stderr, /has no export named Nope; it exports: .*AppModule/);
    const ts = await capture(manifestsCommand, ['--module', join(here, '..', 'src', 'fixtures', 'app.module.ts')]);
    assert.match(ts.stderr, /is TypeScript: build the application/);
    const notModule = await capture(manifestsCommand, [
      '--module',
      join(here, 'fixtures', 'gadget.js'),
      '--export',
      'GadgetController',
    ]);
    assert.match(notModule.stderr, /the export GadgetController .* is not a Nest module/);
  });

  it('fails when the module has no controllers', async () => {
    const { code, stderr } = await capture(manifestsCommand, ['--module', fixture, '--export', 'GadgetModule']);
    // GadgetModule's controllers come from its register() dynamic module, not its class.
    assert.equal(code, 1);
    assert.match(stderr, /no @Controller classes in GadgetModule/);
  });
});

describe('nestor', () => {
  it('dispatches commands and explains unknown ones', async () => {
    assert.equal((await capture(run, ['--help'])).code, 0);
    const unknown = await capture(run, ['deploy']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "deploy"/);
    const help = await capture(run, ['manifests', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--module <path>/);
    assert.match(help.stdout, /--create-namespace/);
    assert.match(
      help.stdout,
      /kubectl apply -k <dir>\/crds[^\n]*\n[^\n]*<dir>\/namespace[^\n]*\n[^\n]*<dir>\/operator/,
    );
    assert.match(help.stdout, /kubectl delete -k <dir>\/operator deletes\nthe operator alone/);
  });
});

/** The files under a folder, as sorted relative paths. */
async function readdirRecursive(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('parseManifestsArguments on arbitrary command lines', () => {
  const flags = [
    '--module',
    '--export',
    '--out',
    '--name',
    '--namespace',
    '--create-namespace',
    '--image',
    '--webhook-certificates',
    '--metrics-port',
    '--health-port',
    '--watch-namespace',
    '--service-monitor',
    '--metrics-certificates',
    '--metrics-reader',
    '--no-network-policy',
    '-h',
    '--bogus',
  ];
  const word = fc.oneof(
    fc.constantFrom(...flags),
    fc.string({ maxLength: 12 }),
    fc.constantFrom('8443', '0', '65536', 'a/b', 'cert-manager'),
  );

  it('parses any argv or refuses it with a UsageError, never another error', () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), (argv) => {
        try {
          parseManifestsArguments(argv, '/nonexistent');
        } catch (error) {
          assert.ok(error instanceof UsageError, `threw ${String(error)}`);
          assert.ok(error.message.length > 0);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reads back what a valid command line says, in any order of its flags', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/);
    fc.assert(
      fc.property(
        label,
        label,
        fc.integer({ min: 1, max: 65535 }),
        fc.array(fc.tuple(label, label), { maxLength: 3 }),
        fc.boolean(),
        (name, namespace, metricsPort, readers, serviceMonitor) => {
          const pairs: string[][] = [
            ['--module', 'dist/app.module.js'],
            ['--name', name],
            ['--namespace', namespace],
            [`--metrics-port=${metricsPort}`],
            ...readers.map(([ns, sa]) => ['--metrics-reader', `${ns}/${sa}`]),
            ...(serviceMonitor ? [['--service-monitor']] : []),
          ];
          const parsed = parseManifestsArguments(pairs.reverse().flat(), '/nonexistent');
          assert.notEqual(parsed, 'help');
          if (parsed === 'help') return;
          assert.equal(parsed.name, name);
          assert.equal(parsed.namespace, namespace);
          assert.equal(parsed.metricsPort, metricsPort);
          assert.deepEqual(
            parsed.metricsReaders ?? [],
            readers.reverse().map(([ns, sa]) => `${ns}/${sa}`),
          );
          assert.equal(parsed.serviceMonitor === true, serviceMonitor);
        },
      ),
      { numRuns: 200 },
    );
  });
});
