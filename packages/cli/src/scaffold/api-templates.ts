// The files `nestor create api` writes for a kind: the @CustomResource class, its
// controller, its Nest module and an e2e test in the application's runner's style.
import type { ApiNames } from './api-names.js';
import { importPath, type NestProject } from './nest-project.js';

type Project = Pick<NestProject, 'esm' | 'runner'>;

export function resourceSource({ group, version, kind }: ApiNames): string {
  return `import {
  type Condition,
  ConditionsField,
  CustomResource,
  type Defaulted,
  Field,
  type ObjectMeta,
} from '@nestor/operator';

/** What users ask for. Each @Field becomes part of the CRD's OpenAPI schema. */
export class ${kind}Spec {
  /**
   * Defaulted: a writer may leave it out (AsWritten<${kind}>), and the API server fills in
   * the default, so every object read has it (docs/custom-resources.md).
   */
  @Field({
    type: 'integer',
    minimum: 1,
    default: 1,
    description: 'An example field: replace it with your own.',
  })
  replicas!: Defaulted<number>;
}

/** What the controller observed. */
export class ${kind}Status {
  /** metav1.Condition, keyed by type: what \`kubectl wait --for=condition=Ready\` reads. */
  @ConditionsField()
  conditions?: Condition[];

  @Field({ type: 'integer', required: false, description: 'The generation of the spec this status describes.' })
  observedGeneration?: number;
}

@CustomResource({
  group: '${group}',
  version: '${version}',
  kind: '${kind}',
  scope: 'Namespaced',
  subresources: { status: {} },
  printerColumns: [{ name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' }],
})
export class ${kind} {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => ${kind}Spec)
  spec!: ${kind}Spec;

  @Field(() => ${kind}Status, { required: false })
  status?: ${kind}Status;
}
`;
}

export function controllerSource({ kind, file }: ApiNames, project: Project): string {
  return `import { Controller, Reconcile, StatusConditions, type ReconcileContext } from '@nestor/operator';
import { ${kind} } from '${importPath(project, `./${file}.resource`)}';

/**
 * Reconciles each ${kind}: called with the object as the cache holds it now, whenever it or
 * what it owns changes, one call per object at a time, retried with backoff when it throws.
 */
@Controller(${kind})
export class ${kind}Controller {
  @Reconcile()
  async reconcile(${camel(kind)}: ${kind}, ctx: ReconcileContext): Promise<void> {
    // Write through ctx.client: fenced by this controller's Lease, cut by ctx.signal.
    // Make the cluster match ${camel(kind)}.spec here, e.g. server-side apply what it owns:
    //   await ctx.client.apply(deploymentFor(${camel(kind)}), { owner: ${camel(kind)} });
    // and add \`owns: [Deployment]\` to @Controller so their changes wake this up.
    const conditions = new StatusConditions(${camel(kind)});
    conditions.set({ type: 'Ready', status: 'True', reason: 'Reconciled', message: 'the spec is applied' });
    if (conditions.changed || ${camel(kind)}.status?.observedGeneration !== ${camel(kind)}.metadata.generation) {
      await ctx.client.patchStatus(${camel(kind)}, {
        conditions: conditions.list,
        observedGeneration: ${camel(kind)}.metadata.generation,
      });
      await ctx.client.recordEvent(${camel(kind)}, 'Normal', 'Reconciled', 'the spec is applied');
    }
    ctx.log.log(\`reconciled \${ctx.request.namespace}/\${ctx.request.name}\`);
  }
}
`;
}

export function moduleSource({ kind, file }: ApiNames, project: Project): string {
  return `import { Module } from '@nestjs/common';
import { ${kind}Controller } from '${importPath(project, `./${file}.controller`)}';

@Module({ providers: [${kind}Controller] })
export class ${kind}Module {}
`;
}

/** An e2e test against a real API server, for the app's runner (its globals: describe, it, expect). */
export function e2eSource(names: ApiNames, project: Project): string {
  const { group, version, kind, plural, file } = names;
  const lower = camel(kind);
  return `// Runs against a real kube-apiserver and etcd: @nestor/testing's global setup starts them
// (${project.runner === 'vitest' ? 'vitest.config.e2e.ts' : 'test/jest-e2e.json'}: globalSetup), and this file attaches to them.
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  allVersionsOf,
  customResourceDefinitions,
  OperatorModule,
} from '@nestor/operator';
import { importedCrds, TestEnvironment, waitFor } from '@nestor/testing';
import { ${kind}Module } from '${importPath(project, `../src/${file}/${file}.module`)}';
import { ${kind} } from '${importPath(project, `../src/${file}/${file}.resource`)}';

describe('${kind}Controller (e2e)', () => {
  let env: TestEnvironment;
  let app: INestApplicationContext;
  let namespace: string;

  beforeAll(async () => {
    env = await TestEnvironment.start({
      crds: [
        // Every version of the kind the app loads (a second one added later included).
        ...customResourceDefinitions(allVersionsOf([${kind}])),
        // The kinds \`nestor import crd\` vendored in src/kinds, which the app may watch.
        ...importedCrds(),
      ],
    });
    namespace = await env.createNamespace('${file}');
    const moduleRef = await Test.createTestingModule({
      imports: [
        OperatorModule.forRoot({
          kubeConfig: env.kubeConfig,
          namespace,
          metrics: { port: 0 },
          health: { port: 0 },
          webhooks: { port: 0 }, // test webhooks with env.installWebhooks (docs/webhooks.md)
        }),
        ${kind}Module,
      ],
    }).compile();
    app = await moduleRef.init();
  });

  afterAll(async () => {
    await app?.close();
    await env?.stop();
  });

  it('marks a ${kind} Ready', async () => {
    const path = \`/apis/${group}/${version}/namespaces/\${namespace}/${plural}\`;
    await env.client.request('POST', path, {
      apiVersion: '${group}/${version}',
      kind: '${kind}',
      metadata: { name: 'example' },
      spec: { replicas: 2 },
    });
    const ${lower} = await waitFor(
      async () => {
        const current = await env.client.request<${kind}>('GET', \`\${path}/example\`);
        const ready = current.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        return ready ? current : undefined;
      },
      { timeoutMs: 30_000, what: 'the ${kind} to be Ready' },
    );
    expect(${lower}.status?.observedGeneration).toBe(${lower}.metadata.generation);
  });
});
`;
}

function camel(kind: string): string {
  const lead = /^[A-Z]+(?=[A-Z][a-z]|$)|^[A-Z]/.exec(kind)![0];
  return lead.toLowerCase() + kind.slice(lead.length);
}
