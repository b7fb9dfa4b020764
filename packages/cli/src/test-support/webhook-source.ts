// A validating webhook on a kind `nestor create api` wrote, as its user adds one next: the
// scaffolding e2e tests check that the app's tests still pass with it (the webhook server
// would otherwise read its certificate from /tmp/k8s-webhook-server/serving-certs).

/** The webhook class `<Kind>Webhook` in `src/<file>/<file>.webhook.ts`. */
export function webhookSource(kind: string, resourceImport: string): string {
  return `import { AdmissionDenied, ValidateCreate, Webhook } from '@nestor/operator';
import { ${kind} } from '${resourceImport}';

@Webhook(${kind})
export class ${kind}Webhook {
  @ValidateCreate()
  create(object: ${kind}): void {
    if (object.spec.replicas > 10) throw new AdmissionDenied('at most 10 replicas', { code: 422 });
  }
}
`;
}

/** The kind's module source with the webhook imported and provided. */
export function withWebhookProvider(moduleSource: string, kind: string, webhookImport: string): string {
  const providers = `providers: [${kind}Controller]`;
  if (!moduleSource.includes(providers)) throw new Error(`the module has no "${providers}" to add the webhook to`);
  return `import { ${kind}Webhook } from '${webhookImport}';\n${moduleSource.replace(providers, `providers: [${kind}Controller, ${kind}Webhook]`)}`;
}
