// `nestor manifests --olm` checked by operator-framework's own validators (the bundle, CSV,
// CRD, OperatorHub and good-practices validators of github.com/operator-framework/api,
// built from packages/testing/olm into Nestor's cache, as helm is): a bundle of the test
// operator passes them all, errors and warnings; the same bundle broken in one place is
// refused by the validator that checks that place, so that the first result cannot be
// vacuous; and what the CSV installs is accepted by a real API server (a server-side dry run).
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureOlmValidator, TestEnvironment, validateOlmBundle, type OlmValidation } from '@nestor/testing';
import { parse, stringify } from 'yaml';
import { GADGET_GROUP } from './fixtures/gadget.js';
import { runCommand } from './test-support/run-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const NAME = 'gadget-operator';
const CSV_FILE = `manifests/${NAME}.clusterserviceversion.yaml`;

let work: string;
let config: string;

const OLM_YAML = {
  displayName: 'Gadget Operator',
  summary: 'Keeps a ConfigMap for each Gadget.',
  description: 'Keeps a ConfigMap with the message of each Gadget, in its namespace.',
  version: '1.2.0',
  provider: { name: 'Nestor', url: 'https://nestor.dev' },
  maintainers: [{ name: 'Nestor maintainers', email: 'maintainers@nestor.dev' }],
  icon: 'icon.svg',
  capabilities: 'Seamless Upgrades',
  categories: ['Developer Tools'],
  channels: ['stable', 'candidate'],
  minKubeVersion: '1.31.0',
  kinds: { Gadget: { description: 'A message kept in a ConfigMap.' } },
  examples: ['v1', 'v1alpha1'].map((version) => ({
    apiVersion: `${GADGET_GROUP}/${version}`,
    kind: 'Gadget',
    metadata: { name: 'example' },
    spec: { message: 'hello' },
  })),
};

/** `nestor manifests --olm` of the fixture operator into a new folder; it must succeed. */
async function bundle(extra: string[] = [], module = 'app.module.js'): Promise<string> {
  const dir = await mkdtemp(join(work, 'bundle-'));
  const result = await runOlm(dir, extra, module);
  assert.equal(result.code, 0, result.output);
  return dir;
}

function runOlm(dir: string, extra: string[], module = 'app.module.js', olmConfig = config) {
  const args = ['manifests', '--module', join(here, 'fixtures', module), '--olm', dir, '--name', NAME];
  return runCommand(
    process.execPath,
    [join(here, 'main.js'), ...args, '--olm-config', olmConfig, '--image', 'registry.example/gadget:1.2.0', ...extra],
    work,
    { timeoutMs: 60_000 },
  );
}

interface Rule {
  resources: string[];
  verbs: string[];
}
interface Descriptor {
  path: string;
  'x-descriptors': string[];
}
/** The CSV's fields these tests read. */
interface Csv {
  metadata: { annotations: Record<string, string> };
  spec: {
    installModes: { type: string; supported: boolean }[];
    maintainers: { email: string }[];
    minKubeVersion: string;
    install: {
      spec: {
        deployments: {
          name: string;
          label: Record<string, string>;
          spec: { template: { spec: { containers: { env: { name: string }[] }[] } } };
        }[];
        permissions: { rules: Rule[] }[];
        clusterPermissions: { rules: Rule[] }[];
      };
    };
    customresourcedefinitions: {
      owned: { version: string; specDescriptors: Descriptor[]; statusDescriptors: Descriptor[] }[];
    };
  };
}

const csvOf = async (dir: string) => parse(await readFile(join(dir, CSV_FILE), 'utf8')) as Csv;
const findings = (validation: OlmValidation) =>
  validation.findings.map((f) => `${f.level} ${f.validator}: ${f.detail}`);

before(async () => {
  // A test that cannot build the checker fails here, saying why (no Go, a failed build): never skipped.
  await ensureOlmValidator({ onProgress: (line) => process.stderr.write(`[olm-validate] ${line}\n`) });
  work = await mkdtemp(join(tmpdir(), 'nestor-olm-e2e-'));
  config = join(work, 'olm.yaml');
  await writeFile(config, stringify(OLM_YAML));
  await writeFile(
    join(work, 'icon.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8"/></svg>',
  );
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('nestor manifests --olm, checked by operator-framework/api validators', () => {
  it('writes a bundle every validator passes, without a warning, for every namespace', async () => {
    const dir = await bundle();
    const validation = await validateOlmBundle(dir);
    assert.deepEqual(validation.validators, [
      'bundle',
      'csv',
      'crd',
      'operatorhub/v2',
      'standardcapabilities',
      'standardcategories',
      'good-practices',
    ]);
    assert.deepEqual(findings(validation), []);
    // What the loader read: the package and channels from metadata/annotations.yaml, one CSV, the CRD.
    assert.equal(validation.package, NAME);
    assert.deepEqual(validation.channels, ['stable', 'candidate']);
    assert.equal(validation.defaultChannel, 'stable');
    assert.equal(validation.csv, `${NAME}.v1.2.0`);
    assert.deepEqual(validation.crds, [`gadgets.${GADGET_GROUP}`]);
    // OLM makes the ServiceAccount and the rights bound to it from the CSV: neither is a file.
    assert.deepEqual(
      (await readdir(join(dir, 'manifests'))).filter((file) => /serviceaccount|_role/.test(file)),
      [],
    );

    const csv = await csvOf(dir);
    assert.deepEqual(
      csv.spec.installModes
        .filter((mode: { supported: boolean }) => mode.supported)
        .map((m: { type: string }) => m.type),
      ['AllNamespaces'],
    );
    const clusterRules = csv.spec.install.spec.clusterPermissions[0]!.rules as {
      resources: string[];
      verbs: string[];
    }[];
    assert.ok(clusterRules.some((rule) => rule.resources.includes('gadgets') && rule.verbs.includes('watch')));
    const owned = csv.spec.customresourcedefinitions.owned;
    assert.deepEqual(owned.map((crd) => crd.version).sort(), ['v1', 'v1alpha1']);
    const v1 = owned.find((crd) => crd.version === 'v1')!;
    assert.deepEqual(
      v1.specDescriptors.map((d: { path: string; 'x-descriptors': string[] }) => [d.path, d['x-descriptors']]),
      [
        ['copies', ['urn:alm:descriptor:com.tectonic.ui:number']],
        ['message', ['urn:alm:descriptor:com.tectonic.ui:text']],
      ],
    );
    assert.deepEqual(v1.statusDescriptors.find((d: { path: string }) => d.path === 'phase')?.['x-descriptors'], [
      'urn:alm:descriptor:io.kubernetes.phase',
    ]);
    // The image's labels are the annotations the loader read.
    const annotations = (
      parse(await readFile(join(dir, 'metadata/annotations.yaml'), 'utf8')) as { annotations: Record<string, string> }
    ).annotations;
    const labels = Object.fromEntries(
      [...(await readFile(join(dir, 'bundle.Dockerfile'), 'utf8')).matchAll(/^LABEL (\S+)=(\S+)$/gm)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    assert.deepEqual(labels, annotations);
  });

  it('writes one for an operator of one namespace: OwnNamespace, its rights as permissions', async () => {
    const dir = await bundle(['--watch-namespace', 'gadgets']);
    assert.deepEqual(findings(await validateOlmBundle(dir)), []);
    const csv = await csvOf(dir);
    assert.deepEqual(
      csv.spec.installModes
        .filter((mode: { supported: boolean }) => mode.supported)
        .map((m: { type: string }) => m.type),
      ['OwnNamespace', 'SingleNamespace'],
    );
    const env = csv.spec.install.spec.deployments[0]!.spec.template.spec.containers[0]!.env as Record<
      string,
      unknown
    >[];
    assert.deepEqual(
      env.find((variable) => variable.name === 'WATCH_NAMESPACE'),
      {
        name: 'WATCH_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
      },
    );
    const rules = csv.spec.install.spec.permissions[0]!.rules as { resources: string[] }[];
    assert.ok(rules.some((rule) => rule.resources.includes('gadgets')));
  });

  it('has each broken bundle refused by the validator that checks what broke', async () => {
    const clean = await bundle();
    const broken = async (what: string, change: (dir: string, csv: Csv) => Promise<void> | void) => {
      const dir = await mkdtemp(join(work, 'broken-'));
      await cp(clean, dir, { recursive: true });
      const csv = await csvOf(dir);
      await change(dir, csv);
      await writeFile(join(dir, CSV_FILE), stringify(csv));
      const errors = (await validateOlmBundle(dir)).findings.filter((f) => f.level === 'Error');
      assert.ok(errors.length > 0, `${what}: no validator refused it`);
      return errors.map((f) => `${f.validator}: ${f.detail}`).join('\n');
    };
    assert.match(
      await broken('the CRD left out', (dir) => rm(join(dir, `manifests/${GADGET_GROUP}_gadgets.yaml`))),
      /^bundle: .*owned CRD "clitest.nestor.dev\/v1, Kind=Gadget" not found in bundle/m,
    );
    assert.match(
      await broken('an unknown capability level', (_, csv) => void (csv.metadata.annotations.capabilities = 'Works')),
      /^standardcapabilities: .*"Works" is not a valid capabilities level/m,
    );
    assert.match(
      await broken('a maintainer without an address', (_, csv) => void (csv.spec.maintainers[0]!.email = 'nobody')),
      /^operatorhub\/v2: .*Maintainers email nobody is invalid/m,
    );
    assert.match(
      await broken('no install mode', (_, csv) => {
        for (const mode of csv.spec.installModes) mode.supported = false;
      }),
      /^csv: .*none of InstallModeTypes are supported/m,
    );
    assert.match(
      await broken('a Kubernetes version that is none', (_, csv) => void (csv.spec.minKubeVersion = 'latest')),
      /^csv: .*MinKubeVersion has an invalid value: latest/m,
    );
    assert.match(
      await broken('a CRD of no scope', async (dir) => {
        const file = join(dir, `manifests/${GADGET_GROUP}_gadgets.yaml`);
        const crd = parse(await readFile(file, 'utf8')) as { spec: { scope: string } };
        crd.spec.scope = 'Everywhere';
        await writeFile(file, stringify(crd));
      }),
      /^crd: .*spec\.scope/m,
    );
  });

  it('is installable: the API server accepts its CRD and what the CSV makes of its strategy', async () => {
    const env = await TestEnvironment.start();
    try {
      const dir = await bundle();
      const csv = await csvOf(dir);
      const namespace = await env.createNamespace('olm');
      const crd = parse(await readFile(join(dir, `manifests/${GADGET_GROUP}_gadgets.yaml`), 'utf8')) as object;
      const { install } = csv.spec;
      // A server-side apply, dry run: validated whether or not another file of the shared
      // control plane has the object (a dry-run create of an existing CRD is a 409).
      const dryRun = async (
        path: string,
        object: { metadata: { name: string; [key: string]: unknown }; [key: string]: unknown },
      ) => {
        const query = 'dryRun=All&fieldManager=olm-test&force=true';
        const { status, text } = await env.client.raw(
          'PATCH',
          `${path}/${object.metadata.name}?${query}`,
          object,
          'application/apply-patch+yaml',
        );
        assert.ok(status < 300, `${path}: ${status} ${text}`);
      };
      await dryRun('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd as { metadata: { name: string } });
      await dryRun(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: install.spec.deployments[0]!.name, labels: install.spec.deployments[0]!.label },
        spec: install.spec.deployments[0]!.spec,
      });
      await dryRun('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `${NAME}-olm-test` },
        rules: install.spec.clusterPermissions[0]!.rules,
      });
    } finally {
      await env.stop();
    }
  });

  it('refuses what a bundle cannot say, naming it and what to do', async () => {
    const selector = await runOlm(await mkdtemp(join(work, 'selector-')), [], 'webhook-app.module.js');
    assert.equal(selector.code, 1);
    assert.match(selector.stderr, /has a namespaceSelector, which a CSV cannot carry .* leave namespaceSelector out/);

    const missing = await runOlm(await mkdtemp(join(work, 'missing-')), [], 'app.module.js', join(work, 'none.yaml'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no \S+none\.yaml: an OLM bundle needs values no decorator gives/);
    assert.match(missing.stderr, /Gadget: \{ description: \.\.\. \}/);

    const partial = join(work, 'partial.yaml');
    await writeFile(partial, stringify({ displayName: 'Gadget Operator', capabilities: 'Works', kinds: {} }));
    const gaps = await runOlm(await mkdtemp(join(work, 'partial-')), [], 'app.module.js', partial);
    assert.equal(gaps.code, 1);
    for (const gap of [
      /description is missing/,
      /maintainers is missing/,
      /icon is missing/,
      /channels is missing/,
      /minKubeVersion is missing/,
      /kinds\.Gadget\.description is missing/,
      /capabilities Works is not one of Basic Install/,
    ])
      assert.match(gaps.stderr, gap);
  });
});
