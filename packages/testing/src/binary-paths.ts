/** Paths of the control-plane binaries one environment runs. */
export interface ControlPlaneBinaries {
  kubeApiServer: string;
  etcd: string;
  /** Absent when the assets come from a directory that has none (envtest ships none). */
  kubeControllerManager?: string;
  /** For fake nodes (`nodes`); envtest's archives carry none. */
  kubeScheduler?: string;
  /** kwok, which runs the fake nodes, when they were asked for. */
  kwok?: string;
  /** envtest's archives carry one. */
  kubectl?: string;
  /** Where they came from, for error messages. */
  origin: string;
}
