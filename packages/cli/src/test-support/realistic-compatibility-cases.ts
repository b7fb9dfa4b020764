// The compatibility check on CRDs people install: each fixture of fixtures/crds against
// itself, against a copy with one change made deep in its schema, and two real upgrades of
// fixtures/crd-releases. The CLI's tests assert these verdicts; bench/crd-compat.mjs gives the
// same pairs to crdify.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export type CrdObject = Record<string, unknown>;
type Node = Record<string, unknown>;

export interface RealisticCase {
  name: string;
  /** Where old and new come from, for the reports: file names. */
  source: string;
  old: CrdObject;
  new: CrdObject;
  /** The findings, as `rule version path` (`rule path` for those of the whole CRD: scope, removal). */
  expected: string[];
}

export const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

const CERTIFICATE = 'crds/cert-manager.io_certificates.yaml';
const SERVICE_MONITOR = 'crds/monitoring.coreos.com_servicemonitors.yaml';
const HTTP_ROUTE = 'crds/gateway.networking.k8s.io_httproutes.yaml';

const parsed = new Map<string, CrdObject>();

/** A fixture's CRD, parsed once, a copy each call. */
export function fixtureCrd(file: string): CrdObject {
  let crd = parsed.get(file);
  if (!crd) {
    crd = parse(readFileSync(`${FIXTURES}${file}`, 'utf8'), { uniqueKeys: false }) as CrdObject;
    parsed.set(file, crd);
  }
  return structuredClone(crd);
}

/** The schema node at a path of one version (`.spec.ports[*].name`). */
export function nodeAt(crd: CrdObject, version: string, path: string): Node {
  const versions = (crd.spec as { versions: Array<{ name: string; schema: { openAPIV3Schema: Node } }> }).versions;
  let node = versions.find((v) => v.name === version)!.schema.openAPIV3Schema;
  for (const step of path.match(/\.[^.[]+|\[\*\]/g) ?? []) {
    node = (step === '[*]' ? node.items : (node.properties as Record<string, Node>)[step.slice(1)]) as Node;
    if (!node) throw new Error(`${path}: no ${step} in the fixture's ${version}`);
  }
  return node;
}

/** A copy of the fixture with `change` made. */
function changed(file: string, change: (crd: CrdObject) => void): CrdObject {
  const crd = fixtureCrd(file);
  change(crd);
  return crd;
}

function versionsOf(crd: CrdObject): Array<Record<string, unknown>> {
  return (crd.spec as { versions: Array<Record<string, unknown>> }).versions;
}

function mutation(
  name: string,
  file: string,
  change: (crd: CrdObject) => void,
  expected: string[],
  stored?: string[],
): RealisticCase {
  const old = fixtureCrd(file);
  if (stored) old.status = { storedVersions: stored };
  return { name, source: file.replace(/^crds\//, ''), old, new: changed(file, change), expected };
}

function release(name: string, from: string, to: string, expected: string[], stored?: string[]): RealisticCase {
  const old = fixtureCrd(`crd-releases/${from}`);
  if (stored) old.status = { storedVersions: stored };
  return { name, source: `${from} -> ${to}`, old, new: fixtureCrd(`crd-releases/${to}`), expected };
}

export function realisticCases(): RealisticCase[] {
  return [
    ...[CERTIFICATE, SERVICE_MONITOR, HTTP_ROUTE].map((file) =>
      mutation(`${file.slice(5, file.indexOf('_'))} unchanged`, file, () => {}, []),
    ),
    mutation(
      'Certificate: an algorithm dropped from the enum',
      CERTIFICATE,
      (crd) => {
        const algorithm = nodeAt(crd, 'v1', '.spec.privateKey.algorithm');
        algorithm.enum = (algorithm.enum as string[]).filter((value) => value !== 'Ed25519');
      },
      ['enum-narrowed v1 .spec.privateKey.algorithm'],
    ),
    mutation(
      'Certificate: keystores removed',
      CERTIFICATE,
      (crd) => delete (nodeAt(crd, 'v1', '.spec').properties as Record<string, Node>).keystores,
      ['field-removed v1 .spec.keystores'],
    ),
    mutation(
      'Certificate: revisionHistoryLimit made a string',
      CERTIFICATE,
      (crd) => {
        const limit = nodeAt(crd, 'v1', '.spec.revisionHistoryLimit');
        limit.type = 'string';
        delete limit.format;
      },
      ['type-changed v1 .spec.revisionHistoryLimit'],
    ),
    mutation(
      'Certificate: a CEL rule on secretName',
      CERTIFICATE,
      (crd) => {
        nodeAt(crd, 'v1', '.spec.secretName')['x-kubernetes-validations'] = [
          { rule: 'self.size() <= 253', message: 'a Secret name has at most 253 characters' },
        ];
      },
      ['cel-rule-added v1 .spec.secretName'],
    ),
    mutation(
      'ServiceMonitor: an endpoint port made required',
      SERVICE_MONITOR,
      (crd) => {
        nodeAt(crd, 'v1', '.spec.endpoints[*]').required = ['port'];
      },
      ['required-added v1 .spec.endpoints[*].port'],
    ),
    mutation(
      'ServiceMonitor: keepDroppedTargets minimum raised',
      SERVICE_MONITOR,
      (crd) => {
        nodeAt(crd, 'v1', '.spec.keepDroppedTargets').minimum = 1;
      },
      ['limit-tightened v1 .spec.keepDroppedTargets'],
    ),
    mutation(
      'ServiceMonitor: a description reworded',
      SERVICE_MONITOR,
      (crd) => {
        nodeAt(crd, 'v1', '.spec.endpoints[*].scheme').description = 'The scheme of the scrape: http or https.';
      },
      [],
    ),
    mutation(
      'HTTPRoute: hostnames maxItems lowered in both versions',
      HTTP_ROUTE,
      (crd) => {
        for (const version of ['v1', 'v1beta1']) nodeAt(crd, version, '.spec.hostnames').maxItems = 8;
      },
      ['limit-tightened v1 .spec.hostnames', 'limit-tightened v1beta1 .spec.hostnames'],
    ),
    mutation(
      'HTTPRoute: a default changed in v1 only (webhook-free versions then differ)',
      HTTP_ROUTE,
      (crd) => {
        nodeAt(crd, 'v1', '.spec.parentRefs[*].kind').default = 'Service';
      },
      ['default-changed v1 .spec.parentRefs[*].kind'],
    ),
    mutation(
      'HTTPRoute: hostnames made a set',
      HTTP_ROUTE,
      (crd) => {
        for (const version of ['v1', 'v1beta1'])
          nodeAt(crd, version, '.spec.hostnames')['x-kubernetes-list-type'] = 'set';
      },
      ['list-type-changed v1 .spec.hostnames', 'list-type-changed v1beta1 .spec.hostnames'],
    ),
    mutation(
      'HTTPRoute: v1beta1 removed, storedVersions [v1]',
      HTTP_ROUTE,
      (crd) => {
        (crd.spec as { versions: unknown[] }).versions = versionsOf(crd).filter((v) => v.name !== 'v1beta1');
      },
      ['served-version-removed v1beta1 spec.versions[v1beta1]'],
      ['v1'],
    ),
    release(
      'GRPCRoute v1.1.0 -> v1.2.0, storedVersions unknown',
      'gateway-api-v1.1.0.grpcroutes.yaml',
      'gateway-api-v1.2.0.grpcroutes.yaml',
      ['cel-rule-added v1 .spec.rules', 'stored-version-removed v1alpha2 spec.versions[v1alpha2]'],
    ),
    release(
      'GRPCRoute v1.1.0 -> v1.2.0, storedVersions [v1]',
      'gateway-api-v1.1.0.grpcroutes.yaml',
      'gateway-api-v1.2.0.grpcroutes.yaml',
      ['cel-rule-added v1 .spec.rules'],
      ['v1'],
    ),
    release('Gateway v1.0.0 -> v1.1.0', 'gateway-api-v1.0.0.gateways.yaml', 'gateway-api-v1.1.0.gateways.yaml', [
      'cel-rule-added v1 .spec.listeners',
      'cel-rule-added v1 .spec.listeners[*].tls',
      'cel-rule-added v1beta1 .spec.listeners',
      'cel-rule-added v1beta1 .spec.listeners[*].tls',
    ]),
  ];
}
