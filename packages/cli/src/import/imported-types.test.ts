// Type tests over the imported fixtures (src/fixtures/imported): what `AsWritten<T>` and
// `Defaulted<T>` let a writer and a reader of another project's kinds write. tsc compiles this
// file in the build: an `@ts-expect-error` line that compiles fails it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AsWritten } from '@nestor/operator';
import type {
  HTTPRoute,
  HTTPRouteSpecRulesFiltersRequestRedirect,
  HTTPRouteSpecRulesMatches,
} from '../fixtures/imported/gateway.networking.k8s.io/http-route.v1.js';
import type {
  ServiceMonitor,
  ServiceMonitorSpecEndpointsRelabelings,
} from '../fixtures/imported/monitoring.coreos.com/service-monitor.v1.js';

type Match = AsWritten<HTTPRouteSpecRulesMatches>;
type Redirect = AsWritten<HTTPRouteSpecRulesFiltersRequestRedirect>;
type Relabeling = AsWritten<ServiceMonitorSpecEndpointsRelabelings>;

describe('imported kinds with schema defaults', () => {
  it('take only their enums values, defaulted or not, from a writer (checked by the compiler)', () => {
    const prefix: Match = { path: { type: 'PathPrefix', value: '/' } };
    const defaulted: Match = { path: {} };
    // @ts-expect-error 'Prefix' is not one of HTTPRoute's path match types, default or no default
    const wrongType: Match = { path: { type: 'Prefix' } };
    const redirect: Redirect = { statusCode: 303 };
    // @ts-expect-error a redirect's status code is one of five
    const wrongCode: Redirect = { statusCode: 304 };
    const replace: Relabeling = { action: 'Replace' };
    // @ts-expect-error ServiceMonitor's relabel action is an enum with a default
    const wrongAction: Relabeling = { action: 'rewrite' };
    assert.ok(prefix && defaulted && wrongType && redirect && wrongCode && replace && wrongAction);
  });

  it('read back as present values of their own types', () => {
    const route = {} as HTTPRoute;
    const read = (): 'Exact' | 'PathPrefix' | 'RegularExpression' => route.spec.rules[0]!.matches[0]!.path.type;
    const monitor = {} as ServiceMonitor;
    const action = (): string | undefined => monitor.spec.endpoints[0]?.relabelings?.[0]?.action;
    assert.equal(typeof read, 'function');
    assert.equal(typeof action, 'function');
  });
});
