// The starter's own e2e test (`test/app.e2e-spec.ts` of `nest new`) boots AppModule, which
// after `nestor init` holds OperatorModule.forRoot(): run as it is, it would start a whole
// operator with the deployment's settings (every namespace, the metrics, probe and webhook
// ports, the webhook certificate from /tmp/k8s-webhook-server/serving-certs). init gives it
// test settings instead: the same GET / test, the operator on the e2e control plane in a
// namespace of its own, its servers off.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileChange } from './file-changes.js';
import { importPath, type NestProject } from './nest-project.js';

export const STARTER_E2E_TEST = join('test', 'app.e2e-spec.ts');

/** What init does to the starter's e2e test: replace it, leave it, or say what to change by hand. */
export function starterE2eChange(project: Pick<NestProject, 'root' | 'esm' | 'runner'>): {
  change?: FileChange;
  note?: string;
} {
  const path = join(project.root, STARTER_E2E_TEST);
  if (!existsSync(path)) return {};
  const source = readFileSync(path, 'utf8');
  if (source.includes('OPERATOR_MODULE_OPTIONS') || !/\bAppModule\b/.test(source)) return {};
  if (isStarterTest(source)) {
    return {
      change: {
        path,
        content: starterE2eSource(project),
        what: 'the starter’s GET / test, its operator on the test control plane in a namespace of its own, servers off',
      },
    };
  }
  return {
    note:
      `${STARTER_E2E_TEST} boots AppModule, which now starts the operator with the deployment's settings ` +
      '(every namespace, the webhook certificate files): give it test settings with ' +
      '.overrideProvider(OPERATOR_MODULE_OPTIONS).useValue({ kubeConfig: env.kubeConfig, namespace, ... }) ' +
      'before .compile() (docs/testing.md, "Testing the whole application")',
  };
}

/**
 * The test `nest new` wrote, unchanged in what it tests: one test of GET / answering
 * 'Hello World!' on AppModule. A file with more in it is the user's and is left alone.
 */
function isStarterTest(source: string): boolean {
  return (
    source.includes('Test.createTestingModule({') &&
    /imports:\s*\[AppModule\]/.test(source) &&
    source.includes(".expect('Hello World!')") &&
    (source.match(/\bit\(/g) ?? []).length === 1
  );
}

export function starterE2eSource(project: Pick<NestProject, 'esm' | 'runner'>): string {
  const config = project.runner === 'vitest' ? 'vitest.config.e2e.ts' : 'test/jest-e2e.json';
  return `// The app as a whole: AppModule with its operator, against the real kube-apiserver that
// @nestor/testing's global setup starts (${config}). \`nestor init\` wrote this in place of
// the starter's test, which would have started the operator with the deployment's settings:
// here it watches a namespace of its own, and its metrics, probe and webhook servers are off.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OPERATOR_MODULE_OPTIONS, type OperatorModuleOptions } from '@nestor/operator';
import { importedCrds, TestEnvironment } from '@nestor/testing';
import { AppModule } from '${importPath(project, './../src/app.module')}';

describe('AppController (e2e)', () => {
  let env: TestEnvironment;
  let namespace: string;
  let app: INestApplication;

  beforeAll(async () => {
    // The kinds \`nestor import crd\` vendored in src/kinds, which the app may watch.
    env = await TestEnvironment.start({ crds: importedCrds() });
    namespace = await env.createNamespace('app');
  });

  beforeEach(async () => {
    const operator: OperatorModuleOptions = {
      kubeConfig: env.kubeConfig,
      namespace,
      installCustomResources: true, // the CRDs of the app's kinds, applied at start-up
      metrics: { port: 0 },
      health: { port: 0 },
      webhooks: { port: 0 }, // test webhooks with env.installWebhooks (docs/webhooks.md)
    };
    const moduleFixture = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(OPERATOR_MODULE_OPTIONS)
      .useValue(operator)
      .compile();
    app = moduleFixture.createNestApplication();
    await app.listen(0);
  });

  it('/ (GET)', async () => {
    const response = await fetch(new URL('/', await app.getUrl()));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('Hello World!');
  });

  afterEach(async () => {
    await app?.close();
  });

  afterAll(async () => {
    await env?.stop();
  });
});
`;
}
