// Three releases of one kind against the real control plane, as an operator's users live
// them (docs/upgrades.md): release 1 stores Widgets as v1beta1; release 2 makes v1 the
// storage version, with a field renamed and a @Conversion between them, deprecates v1beta1,
// and its operator migrates every stored object to v1 itself; release 3 drops v1beta1. The
// compatibility check (what `nestor manifests --check` runs) is asked at each step: it fails
// release 2 without its conversion, and release 3 while the cluster still stores v1beta1,
// which the API server refuses too; after the migration it passes release 3, which the API
// server then takes, every object read back whole.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { parallel, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { checkCrdCompatibility } from '../crd/compatibility/crd-compatibility.js';
import { readComparedCrd } from '../crd/compatibility/compared-crd.js';
import { withWebhookConversion } from '../manifests/crd-conversion.js';
import {
  Controller,
  Conversion,
  ConvertFromHub,
  ConvertToHub,
  CustomResource,
  customResourceDefinition,
  Field,
  Reconcile,
  type ObjectMeta,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

const GROUP = `story${randomBytes(3).toString('hex')}.nestor.dev`;
const CRD = `widgets.${GROUP}`;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
const OBJECTS = 40;

class WidgetSpecV1beta1 {
  @Field({ type: 'integer', minimum: 1 }) size!: number;
}

/** Releases 1 and 2: the first version, deprecated once v1 exists. */
@CustomResource({ group: GROUP, version: 'v1beta1', kind: 'Widget', deprecated: 'use v1' })
class WidgetV1beta1 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;
  @Field(() => WidgetSpecV1beta1) spec!: WidgetSpecV1beta1;
}

class WidgetSpecV1 {
  @Field({ type: 'integer', minimum: 1 }) replicas!: number;
}

/** Releases 2 and 3: `size` is `replicas` now. */
@CustomResource({ group: GROUP, version: 'v1', kind: 'Widget', storage: true })
class WidgetV1 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;
  @Field(() => WidgetSpecV1) spec!: WidgetSpecV1;
}

@Conversion(WidgetV1)
class WidgetConversion {
  @ConvertToHub(WidgetV1beta1)
  toHub(old: WidgetV1beta1): Partial<WidgetV1> {
    return { spec: { replicas: old.spec.size } };
  }

  @ConvertFromHub(WidgetV1beta1)
  fromHub(hub: WidgetV1): Partial<WidgetV1beta1> {
    return { spec: { size: hub.spec.replicas } };
  }
}

/** Release 2's controller: it reconciles Widgets at v1, so its leader migrates their CRD. */
@Injectable()
@Controller(WidgetV1)
class WidgetController {
  readonly seen = new Set<string>();

  @Reconcile()
  reconcile(widget: WidgetV1): void {
    this.seen.add(widget.metadata.name!);
  }
}

const release1 = customResourceDefinition(WidgetV1beta1);
const release2 = customResourceDefinition(WidgetV1, WidgetV1beta1);
const release3 = customResourceDefinition(WidgetV1);
/** Release 2 as `nestor manifests` writes it for a kind with a @Conversion. */
const release2Converted = withWebhookConversion([release2], [CRD], {
  name: 'widget-operator',
  namespace: 'widgets',
})[0]!;

/** The rules the check breaks `next` by, against `previous` (a generated CRD or one read from the cluster). */
const broken = (previous: object, next: object) =>
  checkCrdCompatibility([readComparedCrd(previous, 'previous')], [readComparedCrd(next, 'next')]).breaking.map(
    (finding) => `${finding.rule} ${finding.version ?? ''} ${finding.path}`.replace(/ +/g, ' '),
  );

let env: TestEnvironment;
let ns: string;
let webhooks: LocalWebhooks | undefined;
let app: INestApplicationContext | undefined;

const live = () => env.client.request<{ status: { storedVersions: string[] } }>('GET', CRD_PATH);
const widgets = (version: string, name = '') =>
  `/apis/${GROUP}/${version}/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('story');
});

after(async () => {
  // Conversion back to None before the webhook's server goes: the CRD's deletion reads its objects.
  await webhooks?.uninstall();
  await env?.client.request('DELETE', CRD_PATH).catch(() => {});
  await app?.close();
  await env?.stop();
});

describe('a kind through three releases: a new storage version, the migration, the old one dropped', () => {
  it('release 1 stores its objects as v1beta1', async () => {
    await env.installCRDs([release1]);
    await parallel(
      Array.from({ length: OBJECTS }, (_, i) => i),
      8,
      (i) =>
        env.client.request('POST', widgets('v1beta1'), {
          apiVersion: `${GROUP}/v1beta1`,
          kind: 'Widget',
          metadata: { name: `w${i}` },
          spec: { size: (i % 9) + 1 },
        }),
    );
    assert.deepEqual((await live()).status.storedVersions, ['v1beta1']);
  });

  it('the check fails release 2 without its conversion, and passes it with one', () => {
    // v1 renames a field: served side by side without a conversion, v1beta1's objects would
    // be read as v1 with `size` pruned and no `replicas`.
    assert.deepEqual(broken(release1, release2), ['conversion-missing v1 spec.conversion']);
    assert.deepEqual(broken(release1, release2Converted), []);
  });

  it('release 2 makes v1 the storage version, and its operator migrates every object to it', async () => {
    await env.installCRDs([release2]);
    webhooks = await env.installWebhooks({ conversions: [CRD] });
    const before = await live();
    assert.deepEqual(before.status.storedVersions, ['v1beta1', 'v1']);

    // Release 3 now: the check refuses it, for the objects still stored as v1beta1, and so
    // does the API server.
    assert.deepEqual(broken(before, release3), ['stored-version-removed v1beta1 spec.versions[v1beta1]']);
    const refused = await env.client.raw(
      'PATCH',
      `${CRD_PATH}?fieldManager=nestor-testing`,
      release3,
      'application/apply-patch+yaml',
    );
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /v1beta1 was previously a storage version/);

    // Release 2's operator: its leader finds storedVersions listing more than v1, rewrites
    // every Widget (converted through its webhook) and trims the list.
    app = await bootOperatorApp({
      kubeConfig: env.kubeConfig,
      providers: [WidgetController, WidgetConversion],
      webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
    });
    await waitFor(async () => (await live()).status.storedVersions.join() === 'v1', {
      timeoutMs: 120_000,
      what: 'the operator to migrate the Widgets and trim storedVersions to [v1]',
    });
    assert.equal(app.get(WidgetController).seen.size, OBJECTS, 'the controller reconciled every Widget at v1');
  });

  it('release 3 drops v1beta1: the check passes it now, and the API server takes it', async () => {
    const migrated = await live();
    assert.deepEqual(broken(migrated, release3), []);
    await env.installCRDs([release3]);
    const list = await env.client.request<{ items: WidgetV1[] }>('GET', widgets('v1'));
    assert.equal(list.items.length, OBJECTS);
    for (const widget of list.items) {
      const i = Number(widget.metadata.name!.slice(1));
      assert.deepEqual(widget.spec, { replicas: (i % 9) + 1 }, widget.metadata.name);
    }
    assert.equal((await env.client.raw('GET', widgets('v1beta1', 'w0'))).status, 404);
  });
});
