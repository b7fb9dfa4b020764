// Settings from outside the code: kubebuilder's manager flags and their environment
// variables, for OperatorModule and for a Nest-free program alike (ownNamespace() is
// runtime/own-namespace.ts: the fleet resolves it when its providers start).
export {
  readOperatorFlags,
  withOperatorFlags,
  bindAddress,
  OPERATOR_FLAG_NAMES,
  type OperatorFlags,
  type BindAddress,
  type FlaggableOptions,
} from './operator-flags.js';
