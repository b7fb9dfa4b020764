import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
// Grafana's dashboard schema as published on npm: TypeScript types generated from its CUE
// schema (no JSON Schema of the classic dashboard model is published). The assignment below
// is checked by tsc; the structural rules Grafana enforces when it loads a dashboard are
// checked at run time.
import type { Dashboard } from '@grafana/schema';
import {
  GRAFANA_SCHEMA_VERSION,
  grafanaDashboards,
  grafanaDashboardsConfigMap,
  type GrafanaDashboard,
} from './grafana-dashboards.js';

const dashboards = grafanaDashboards('widget-operator');

/** The schema as JSON reads it: its string enums (MappingType.ValueToText) as their values ('value'). */
type AsJson<T> = unknown extends T
  ? T
  : T extends string
    ? `${T}`
    : T extends number | boolean | null | undefined
      ? T
      : T extends Array<infer U>
        ? Array<AsJson<U>>
        : { [K in keyof T]: AsJson<T[K]> };

/** Fails to compile when the JSON model drifts from Grafana's schema. */
const asGrafanaSchema = (dashboard: GrafanaDashboard): AsJson<Dashboard> => dashboard;

/** Grafana's own variables, usable in any expression. */
const BUILTIN = new Set(['__rate_interval', '__range', '__interval']);

describe('grafanaDashboards', () => {
  it('writes one controllers and one runtime dashboard, named after the operator', () => {
    assert.deepEqual(Object.keys(dashboards), ['widget-operator-controllers.json', 'widget-operator-runtime.json']);
    const uids = Object.values(dashboards).map((d) => d.uid);
    assert.deepEqual(uids, ['widget-operator-controllers', 'widget-operator-runtime']);
    for (const dashboard of Object.values(grafanaDashboards('a'.repeat(63)))) {
      assert.ok(dashboard.uid.length <= 40, `uid ${dashboard.uid} within Grafana's 40 characters`);
    }
  });

  for (const [file, dashboard] of Object.entries(dashboards)) {
    it(`${file} has the fields Grafana requires and a consistent layout`, () => {
      const checked = asGrafanaSchema(JSON.parse(JSON.stringify(dashboard)) as GrafanaDashboard);
      assert.equal(checked.schemaVersion, GRAFANA_SCHEMA_VERSION);
      assert.ok(dashboard.title && dashboard.uid);
      const variables = new Set(dashboard.templating.list.map((v) => v.name));
      assert.equal(variables.size, dashboard.templating.list.length, 'variable names are unique');

      const ids = dashboard.panels.map((p) => p.id);
      assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
      const cells = new Set<string>();
      for (const panel of dashboard.panels) {
        const { x, y, w, h } = panel.gridPos;
        assert.ok(w > 0 && h > 0 && x >= 0 && x + w <= 24, `${panel.title} fits the 24 columns`);
        for (let i = x; i < x + w; i++) {
          for (let j = y; j < y + h; j++) {
            assert.ok(!cells.has(`${i},${j}`), `${panel.title} overlaps another panel`);
            cells.add(`${i},${j}`);
          }
        }
        if (panel.type === 'row') continue;
        assert.ok(panel.targets.length > 0, `${panel.title} queries something`);
        assert.equal(new Set(panel.targets.map((t) => t.refId)).size, panel.targets.length, 'refIds are unique');
        for (const target of [panel, ...panel.targets]) {
          const uid = /^\$\{(\w+)\}$/.exec(target.datasource.uid)?.[1];
          assert.ok(uid && variables.has(uid), `${panel.title}: its datasource is the datasource variable`);
        }
        for (const { expr } of panel.targets) {
          for (const [, name] of expr.matchAll(/\$(\w+)/g)) {
            assert.ok(variables.has(name!) || BUILTIN.has(name!), `${panel.title}: $${name} is defined`);
          }
          let depth = 0;
          for (const c of expr) {
            depth += c === '(' ? 1 : c === ')' ? -1 : 0;
            assert.ok(depth >= 0, `${expr}: parentheses balance`);
          }
          assert.equal(depth, 0, `${expr}: parentheses balance`);
        }
      }
    });
  }
});

describe('grafanaDashboardsConfigMap', () => {
  it("holds every dashboard under its file name, labelled for Grafana's sidecar", () => {
    const configMap = grafanaDashboardsConfigMap('widget-operator', 'widgets-system');
    assert.equal(configMap.metadata.name, 'widget-operator-grafana-dashboards');
    assert.equal(configMap.metadata.namespace, 'widgets-system');
    assert.equal(configMap.metadata.labels?.['grafana_dashboard'], '1');
    const data = configMap['data'] as Record<string, string>;
    assert.deepEqual(Object.keys(data), Object.keys(dashboards));
    for (const [file, text] of Object.entries(data)) assert.deepEqual(JSON.parse(text), dashboards[file]);
    // kubectl apply keeps the whole object in an annotation, and annotations are capped at 256 KiB.
    const size = Object.values(data).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    assert.ok(size < 128 * 1024, `${size} bytes leave room under the 256 KiB annotation limit`);
  });
});
