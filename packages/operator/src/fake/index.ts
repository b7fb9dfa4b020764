// @nestor/operator/fake: test doubles for unit tests without an API server, as
// controller-runtime's client/fake. Separate from the package's entries on purpose: a test
// that imports from here knows it does not talk to Kubernetes.
export {
  FakeKubeClient,
  fakeKubeClient,
  type FakeAction,
  type FakeKubeClientOptions,
  type RecordedEvent,
} from './fake-kube-client.js';
export { reconcileContext, type FakeReconcileContext } from './reconcile-context.js';
export { fakeFleet, type FakeFleetOptions } from './fake-fleet.js';
