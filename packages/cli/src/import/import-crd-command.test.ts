import 'reflect-metadata';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { V1ConfigMap } from '@nestor/operator';
import { FakeKubeClient } from '@nestor/operator/fake';
import { run } from '../cli.js';
import { generateManifests } from '../generate-manifests.js';
import { Certificate } from '../fixtures/imported/cert-manager.io/certificate.v1.js';
import { HTTPRoute } from '../fixtures/imported/gateway.networking.k8s.io/http-route.v1.js';
import { ServiceMonitor } from '../fixtures/imported/monitoring.coreos.com/service-monitor.v1.js';
import { SITE_LABEL, SiteController } from '../fixtures/site.app.module.js';
import { importCrdCommand, type ImportIo } from './import-crd-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..', '..');
const crds = join(packageRoot, 'fixtures', 'crds');
const golden = join(packageRoot, 'src', 'fixtures', 'imported');

let project: string;

before(async () => {
  project = await mkdtemp(join(tmpdir(), 'nestor-import-crd-'));
});
after(async () => {
  await rm(project, { recursive: true, force: true });
});

async function importCrd(argv: string[], stdin?: string) {
  let stdout = '';
  let stderr = '';
  const io: ImportIo = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: project,
    ...(stdin !== undefined ? { stdin: async () => stdin } : {}),
  };
  const code = await importCrdCommand(argv, io);
  return { code, stdout, stderr };
}

/** Every file under a folder, relative path -> content. */
async function filesIn(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(folder.length + 1)] = await readFile(path, 'utf8');
  }
  return out;
}

const crd = (name: string, versions: unknown[], group = 'example.com') => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${name}s.${group}` },
  spec: {
    group,
    names: { kind: name[0]!.toUpperCase() + name.slice(1), plural: `${name}s` },
    scope: 'Namespaced',
    versions,
  },
});
const version = (name: string, served = true, schema: unknown = { type: 'object' }) => ({
  name,
  served,
  storage: served,
  schema: { openAPIV3Schema: schema },
});

describe('nestor import crd', () => {
  it('writes one file per served version of cert-manager, Prometheus Operator and Gateway API CRDs, as the fixtures hold them', async () => {
    const { code, stdout, stderr } = await importCrd([crds]);
    assert.equal(code, 0, stderr);
    assert.equal(
      stdout.split('\n').slice(0, 8).join('\n'),
      [
        'nestor import crd: 3 kinds, 4 versions',
        '  created src/kinds/cert-manager.io/certificate.v1.ts: Certificate (certificates.cert-manager.io/v1, stored)',
        '  created src/kinds/cert-manager.io/cert-manager.io_certificates.yaml: the CRD of Certificate (certificates.cert-manager.io)',
        '  created src/kinds/gateway.networking.k8s.io/http-route.v1.ts: HTTPRoute (httproutes.gateway.networking.k8s.io/v1, stored)',
        '  created src/kinds/gateway.networking.k8s.io/http-route.v1beta1.ts: HTTPRoute (httproutes.gateway.networking.k8s.io/v1beta1)',
        '  created src/kinds/gateway.networking.k8s.io/gateway.networking.k8s.io_httproutes.yaml: the CRD of HTTPRoute (httproutes.gateway.networking.k8s.io)',
        '  created src/kinds/monitoring.coreos.com/service-monitor.v1.ts: ServiceMonitor (servicemonitors.monitoring.coreos.com/v1, stored)',
        '  created src/kinds/monitoring.coreos.com/monitoring.coreos.com_servicemonitors.yaml: the CRD of ServiceMonitor (servicemonitors.monitoring.coreos.com)',
      ].join('\n'),
    );
    assert.match(stdout, /^Next: import \{ Certificate, newCertificate \}/m);
    // Byte for byte what the build compiles and the e2e test runs (src/fixtures/imported).
    assert.deepEqual(await filesIn(join(project, 'src', 'kinds')), await filesIn(golden));
  });

  it('changes nothing when run again, and says so', async () => {
    const before = await filesIn(join(project, 'src', 'kinds'));
    const { code, stdout } = await importCrd([crds]);
    assert.equal(code, 0);
    assert.equal(stdout, 'nestor import crd: src/kinds is up to date (7 files); nothing to change.\n');
    assert.deepEqual(await filesIn(join(project, 'src', 'kinds')), before);
  });

  it('rewrites the files of a CRD that changed, and only those', async () => {
    const source = join(project, 'changed');
    await cp(crds, source, { recursive: true });
    const file = join(source, 'cert-manager.io_certificates.yaml');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('Requested DNS subject alternative names.', 'DNS names.'),
    );
    const { code, stdout } = await importCrd(['changed']);
    assert.equal(code, 0);
    assert.match(
      stdout,
      /^nestor import crd: 3 kinds, 4 versions\n {2}updated src\/kinds\/cert-manager\.io\/certificate\.v1\.ts: Certificate .*\n {2}updated src\/kinds\/cert-manager\.io\/cert-manager\.io_certificates\.yaml: the CRD of Certificate/,
    );
    assert.equal(stdout.match(/ {2}(created|updated) /g)?.length, 2);
    assert.match(
      await readFile(join(project, 'src/kinds/cert-manager.io/certificate.v1.ts'), 'utf8'),
      /\/\*\* DNS names\. \*\//,
    );
  });

  it('keeps a file it did not write unless --force', async () => {
    const mine = join(project, 'src/kinds/example.com/gadget.v1.ts');
    await mkdir(dirname(mine), { recursive: true });
    await writeFile(mine, 'export const mine = 1;\n');
    const yaml = JSON.stringify(crd('gadget', [version('v1')]));
    const refused = await importCrd(['-'], yaml);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /nothing was changed: these files exist and were not written by nestor import crd:\n {2}src\/kinds\/example\.com\/gadget\.v1\.ts\n/,
    );
    assert.equal(await readFile(mine, 'utf8'), 'export const mine = 1;\n');
    const forced = await importCrd(['-', '--force'], yaml);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(
      forced.stdout,
      /updated src\/kinds\/example\.com\/gadget\.v1\.ts: Gadget \(gadgets\.example\.com\/v1, stored\)/,
    );
  });

  it('reads kubectl get -o yaml from stdin: a List, with other objects skipped and unserved versions left out', async () => {
    const list = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      `- ${JSON.stringify(crd('sprocket', [version('v1alpha1', false), version('v1')]))}`,
      '---',
      'apiVersion: v1',
      'kind: Namespace',
      'metadata: {name: tools}',
    ].join('\n');
    const { code, stdout, stderr } = await importCrd(['-', '--out', 'generated'], list);
    assert.equal(code, 0, stderr);
    assert.match(
      stdout,
      /created generated\/example\.com\/sprocket\.v1\.ts: Sprocket \(sprockets\.example\.com\/v1, stored\)/,
    );
    assert.match(stdout, /^note: stdin: skipped Namespace tools: not a CustomResourceDefinition$/m);
    assert.match(stdout, /^note: sprockets\.example\.com: skipped v1alpha1, which is not served$/m);
    assert.deepEqual(Object.keys(await filesIn(join(project, 'generated'))).sort(), [
      'example.com/example.com_sprockets.yaml',
      'example.com/sprocket.v1.ts',
    ]);
  });

  it('refuses bad input before writing anything, saying which file and what', async () => {
    const bad = join(project, 'bad');
    await mkdir(bad);
    const cases: Array<[string, unknown, RegExp]> = [
      [
        'beta.yaml',
        { ...crd('old', [version('v1')]), apiVersion: 'apiextensions.k8s.io/v1beta1' },
        /bad\/beta\.yaml: the CustomResourceDefinition olds\.example\.com is apiextensions\.k8s\.io\/v1beta1; only apiextensions\.k8s\.io\/v1 is read/,
      ],
      [
        'schema.yaml',
        crd('thing', [
          version('v1', true, {
            type: 'object',
            properties: { spec: { type: 'object', properties: { n: { type: 7 } } } },
          }),
        ]),
        /bad\/schema\.yaml: things\.example\.com, version v1: the schema at \.spec\.n `type` is the number 7/,
      ],
      [
        'path.yaml',
        crd('escape', [version('v1')], '../../etc'),
        /bad\/path\.yaml: .*spec\.group "\.\.\/\.\.\/etc" is not a DNS subdomain/,
      ],
      [
        'name.yaml',
        { ...crd('misnamed', [version('v1')]), metadata: { name: 'other.example.com' } },
        /the CustomResourceDefinition other\.example\.com: its name must be misnameds\.example\.com/,
      ],
      ['broken.yaml', 'kind: CustomResourceDefinition\na: [1', /bad\/broken\.yaml: not YAML or JSON: .*line 2/],
      [
        // A billion laughs: each alias nine of the one before, 9^12 strings once expanded.
        'laughs.yaml',
        'kind: CustomResourceDefinition\n' +
          Array.from({ length: 12 }, (_, i) =>
            i === 0
              ? 'l0: &l0 [x, x, x, x, x, x, x, x, x]'
              : `l${i}: &l${i} [${Array(9)
                  .fill(`*l${i - 1}`)
                  .join(', ')}]`,
          ).join('\n'),
        /bad\/laughs\.yaml: Excessive alias count/,
      ],
      [
        'none.yaml',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
        /no CustomResourceDefinition in bad\/none\.yaml/,
      ],
    ];
    for (const [file, object, message] of cases) {
      await writeFile(join(bad, file), typeof object === 'string' ? object : JSON.stringify(object));
      const { code, stderr } = await importCrd([join('bad', file), '--out', 'refused']);
      assert.equal(code, 1, file);
      assert.match(stderr, /^nestor import crd: nothing was changed: /);
      assert.match(stderr, message);
    }
    await writeFile(join(bad, 'twice.yaml'), JSON.stringify(crd('gizmo', [version('v1')])));
    await writeFile(join(bad, 'twice-again.yaml'), JSON.stringify(crd('gizmo', [version('v1')])));
    const twice = await importCrd(['bad/twice.yaml', 'bad/twice-again.yaml', '--out', 'refused']);
    assert.match(twice.stderr, /gizmos\.example\.com is in bad\/twice\.yaml and in bad\/twice-again\.yaml/);
    const missing = await importCrd(['nowhere.yaml']);
    assert.match(missing.stderr, /nowhere\.yaml does not exist/);
    await assert.rejects(readdir(join(project, 'refused')), { code: 'ENOENT' });
  });

  it('removes the files of versions no longer served, and says which', async () => {
    const both = JSON.stringify(crd('flange', [version('v1alpha1'), { ...version('v1'), storage: false }]));
    assert.equal((await importCrd(['-', '--out', 'versions'], both)).code, 0);
    const mine = join(project, 'versions/example.com/notes.ts');
    await writeFile(mine, '// my notes on v1alpha1\n');
    const { code, stdout } = await importCrd(
      ['-', '--out', 'versions'],
      JSON.stringify(crd('flange', [version('v1alpha1', false), version('v1')])),
    );
    assert.equal(code, 0);
    assert.match(
      stdout,
      /^ {2}removed versions\/example\.com\/flange\.v1alpha1\.ts: flanges\.example\.com\/v1alpha1 is no longer served$/m,
    );
    assert.deepEqual(Object.keys(await filesIn(join(project, 'versions'))).sort(), [
      'example.com/example.com_flanges.yaml',
      'example.com/flange.v1.ts',
      'example.com/notes.ts',
    ]);
  });

  it('names in its next steps the exports the file has, from the sources, as the project imports modules', async () => {
    const esm = join(project, 'esm');
    await mkdir(esm);
    await writeFile(join(esm, 'package.json'), JSON.stringify({ type: 'module' }));
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { size: { type: 'integer', default: 1 } } } },
    };
    const yaml = JSON.stringify(crd('defaulted', [version('v1', true, schema)]));
    const { stdout } = await importCrd(['-', '--dir', 'esm'], yaml);
    assert.match(
      stdout,
      /^Next: import \{ Defaulted, newDefaulted \} from '\.\/kinds\/example\.com\/defaulted\.v1\.js' \(in a file of src\/\)/m,
    );
    assert.match(
      stdout,
      /^The cluster must serve defaulteds\.example\.com: src\/kinds\/example\.com\/example\.com_defaulteds\.yaml is its CRD \(kubectl apply -f src\/kinds\/example\.com\/example\.com_defaulteds\.yaml; in tests, TestEnvironment\.start\(\{ crds: \['src\/kinds\/example\.com'\] \}\)\)\.$/m,
    );
    // The kind keeps its name: the import it would shadow is aliased, and that is said.
    assert.match(stdout, /^note: defaulteds\.example\.com\/v1: Defaulted is imported as NestorDefaulted/m);
    const text = await readFile(join(esm, 'src/kinds/example.com/defaulted.v1.ts'), 'utf8');
    assert.match(text, /^export interface Defaulted \{$/m);
    assert.match(text, /^export function newDefaulted\(/m);
    const cjs = join(project, 'cjs');
    await mkdir(cjs);
    await writeFile(join(cjs, 'package.json'), JSON.stringify({ name: 'app' }));
    const commonjs = await importCrd(['-', '--dir', 'cjs', '--out', 'kinds'], yaml);
    assert.match(
      commonjs.stdout,
      /^Next: import \{ Defaulted, newDefaulted \} from '\.\/kinds\/example\.com\/defaulted\.v1' \(in a file of \.\/\)/m,
    );
  });

  it('changes all the files or none: an I/O error halfway leaves the folder as it was, and says so without a stack', async () => {
    const source = join(project, 'halfway');
    await mkdir(join(source, 'src/kinds'), { recursive: true });
    await writeFile(join(source, 'src/kinds/README.md'), 'my notes\n');
    // A file where the last group's folder must go: the first groups' files could be written, this one cannot.
    await writeFile(join(source, 'src/kinds/monitoring.coreos.com'), 'in the way\n');
    const before = await filesIn(join(source, 'src/kinds'));
    const { code, stdout, stderr } = await importCrd([crds, '--dir', 'halfway']);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      'nestor import crd: nothing was changed: src/kinds/monitoring.coreos.com/service-monitor.v1.ts: src/kinds/monitoring.coreos.com is a file, where a folder must be\n',
    );
    assert.deepEqual(await filesIn(join(source, 'src/kinds')), before);
    assert.deepEqual((await readdir(join(source, 'src'))).sort(), ['kinds'], 'no copy left behind');
  });

  it('says how to call it', async () => {
    const none = await importCrd([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /say where the CRDs are/);
    const badName = await importCrd(['--from-cluster', 'Certificates']);
    assert.equal(badName.code, 2);
    assert.match(badName.stderr, /is not a CRD name: <plural>\.<group>/);
    let out = '';
    const io = { stdout: (t: string) => (out += t), stderr: (t: string) => (out += t), cwd: project };
    assert.equal(await run(['import', 'crd', '--help'], io), 0);
    assert.match(out, /^Usage: nestor import crd <file \| folder \| -> \.\.\. \[options\]/);
    assert.equal(await run(['import', 'chart'], io), 2);
    assert.match(out, /the one there is, is "import crd"/);
  });
});

describe('imported kinds in an operator', () => {
  const site: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'shop', namespace: 'web', uid: 'u-1', labels: { [SITE_LABEL]: 'true' } },
    data: { host: 'shop.example.com', service: 'shop-frontend' },
  };

  it('are what FakeKubeClient stores and returns, typed by their descriptors', async () => {
    const fake = new FakeKubeClient({ kinds: [Certificate, ServiceMonitor, HTTPRoute], objects: [site] });
    await new SiteController(fake).reconcile(site);
    const ref = { namespace: 'web', name: 'shop' };
    const certificate = await fake.get(Certificate, ref);
    assert.deepEqual(certificate?.spec?.dnsNames, ['shop.example.com']);
    assert.equal(certificate?.metadata.ownerReferences?.[0]?.name, 'shop');
    const monitor = await fake.get(ServiceMonitor, ref);
    assert.equal(monitor?.spec.endpoints?.[0]?.targetPort, 8443);
    const routes = await fake.list(HTTPRoute, { namespace: 'web' });
    assert.deepEqual(
      routes.map((route) => route.spec.hostnames),
      [['shop.example.com']],
    );
  });

  it('get RBAC from nestor manifests and no CRD: the project that defines them installs that', async () => {
    const { manifests } = await generateManifests(
      {
        module: join(here, '..', 'fixtures', 'site.app.module.js'),
        export: 'SiteAppModule',
        name: 'sites',
        namespace: 'sites-system',
        image: 'sites:1',
      },
      here,
    );
    assert.deepEqual(manifests.crds, []);
    const role = manifests.rbac.find((object) => object.kind === 'ClusterRole' && object.metadata.name === 'sites') as
      { rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> } | undefined;
    const rules = role?.rules ?? [];
    for (const [group, resource] of [
      ['cert-manager.io', 'certificates'],
      ['monitoring.coreos.com', 'servicemonitors'],
      ['gateway.networking.k8s.io', 'httproutes'],
    ] as const) {
      const rule = rules.find((r) => r.apiGroups.includes(group) && r.resources.includes(resource));
      assert.ok(rule, `no rule for ${resource}.${group} in ${JSON.stringify(rules)}`);
      assert.ok(rule.verbs.includes('watch'), `${resource}: ${rule.verbs.join(',')}`);
    }
  });
});
