/** Paths of the control-plane binaries one environment runs. */
export interface ControlPlaneBinaries {
  kubeApiServer: string;
  etcd: string;
  /** Absent when the assets come from a directory that has none (envtest ships none). */
  kubeControllerManager?: string;
  /** envtest's archives carry one. */
  kubectl?: string;
  /** Where they came from, for error messages. */
  origin: string;
}
