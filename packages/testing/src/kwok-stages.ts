// The stages kwok plays on the fake nodes and their pods: what a kubelet would report.
// kwok ships none built in; these are its defaults (the "fast" pod stages, and the node
// stages for a kwok that renews node Leases) and its fault stages, copied unchanged from
// kubernetes-sigs/kwok v0.8.0, kustomize/stage/ (Apache-2.0, Copyright The Kubernetes
// Authors; each marked with its path), then Nestor's own crash-loop stages. A fault is a
// label on the object (see fake-nodes.ts); a stage that matches nothing costs nothing.

/** kwok's stages, as kwok v0.8.0 ships them. */
const KWOK_STAGES = `
---
# kustomize/stage/node/fast/node-initialize.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}

      {{ $hasInternalIP := false }}
      {{ $hasHostname := false }}
      {{ range .status.addresses }}
        {{ if eq .type "InternalIP" }}
          {{ $hasInternalIP = true }}
        {{ end }}
        {{ if eq .type "Hostname" }}
          {{ $hasHostname = true }}
        {{ end }}
      {{ end }}
      {{ if or (not $hasInternalIP) (not $hasHostname) }}
      addresses:
      {{ end }}
      {{ if not $hasInternalIP }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ end }}
      {{ if not $hasHostname }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}

      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ end }}

      {{ $nodeInfo := .status.nodeInfo }}
      {{ $kwokVersion := printf "kwok-%s" Version }}
      nodeInfo:
        architecture: {{ or $nodeInfo.architecture "amd64" }}
        bootID: {{ or $nodeInfo.bootID \`""\` }}
        containerRuntimeVersion: {{ or $nodeInfo.containerRuntimeVersion $kwokVersion }}
        kernelVersion: {{ or $nodeInfo.kernelVersion $kwokVersion }}
        kubeProxyVersion: {{ or $nodeInfo.kubeProxyVersion $kwokVersion }}
        kubeletVersion: {{ or $nodeInfo.kubeletVersion $kwokVersion }}
        machineID: {{ or $nodeInfo.machineID \`""\` }}
        operatingSystem: {{ or $nodeInfo.operatingSystem "linux" }}
        osImage: {{ or $nodeInfo.osImage \`""\` }}
        systemUUID: {{ or $nodeInfo.systemUUID \`""\` }}
      phase: Running
---
# kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values:
      - 'True'
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}

      addresses:
      {{ with .status.addresses }}
      {{ YAML . 1 }}
      {{ else }}
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      {{ end }}

      {{ with NodePort }}
      daemonEndpoints:
        kubeletEndpoint:
          Port: {{ . }}
      {{ end }}
---
# kustomize/stage/node/chaos/node-not-ready.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-not-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.metadata.labels["node-not-ready.stage.kwok.x-k8s.io"]'
      operator: 'In'
      values:
      - 'true'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
  delay:
    durationMilliseconds: 1000
    durationFrom:
      expressionFrom: '.metadata.annotations["node-not-ready.stage.kwok.x-k8s.io/delay"]'
    jitterDurationMilliseconds: 1000
    jitterDurationFrom:
      expressionFrom: '.metadata.annotations["node-not-ready.stage.kwok.x-k8s.io/jitter-delay"]'
  weight: 10000
  weightFrom:
    expressionFrom: '.metadata.annotations["node-not-ready.stage.kwok.x-k8s.io/weight"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $defaultReason := "nodeFailed" }}
      {{ $defaultMessage := "node failed" }}
      {{ $annotations := or .metadata.annotations dict }}
      {{ $failureType := or ( index $annotations "node-not-ready.stage.kwok.x-k8s.io/type" ) "" }}
      {{ $failureReason := or ( index $annotations "node-not-ready.stage.kwok.x-k8s.io/reason" ) $defaultReason }}
      {{ $failureMessage := or ( index $annotations "node-not-ready.stage.kwok.x-k8s.io/message" ) $defaultMessage }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      {{ if eq .type "Ready" }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ $failureMessage | Quote }}
        reason: {{ $failureReason | Quote }}
        status: "False"
        type: {{ .type  | Quote}}
      {{ else if eq .type $failureType }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ $failureMessage | Quote }}
        reason: {{ $failureReason | Quote }}
        status: "True"
        type: {{ .type  | Quote}}
      {{ else }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}
      {{ end }}
---
# kustomize/stage/pod/fast/pod-ready.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  next:
    statusTemplate: |
      {{ $now := Now }}

      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}

      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}

      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        {{ if eq .restartPolicy "Always" }}
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
        {{ else }}
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
        {{ end }}
      {{ end }}
      {{ $hostIPs := NodeIPsWith .spec.nodeName }}
      {{ with $hostIPs }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
# kustomize/stage/pod/fast/pod-complete.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      {{ $origin := index $root.status.containerStatuses $index }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
---
# kustomize/stage/pod/fast/pod-delete.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    delete: true
---
# kustomize/stage/pod/chaos/pod-container-running-failed.yaml
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-container-running-failed
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.labels["pod-container-running-failed.stage.kwok.x-k8s.io"]'
      operator: 'In'
      values:
      - 'true'
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
  delay:
    durationMilliseconds: 1000
    durationFrom:
      expressionFrom: '.metadata.annotations["pod-container-running-failed.stage.kwok.x-k8s.io/delay"]'
    jitterDurationMilliseconds: 1000
    jitterDurationFrom:
      expressionFrom: '.metadata.annotations["pod-container-running-failed.stage.kwok.x-k8s.io/jitter-delay"]'
  weight: 10000
  weightFrom:
    expressionFrom: '.metadata.annotations["pod-container-running-failed.stage.kwok.x-k8s.io/weight"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $defaultReason := "containerFailed" }}
      {{ $defaultMessage := "container failed" }}
      {{ $defaultExitCode := 1 }}
      {{ $annotations := or .metadata.annotations dict }}
      {{ $containerName := or ( index $annotations "pod-container-running-failed.stage.kwok.x-k8s.io/container-name" ) "" }}
      {{ $failureReason := or ( index $annotations "pod-container-running-failed.stage.kwok.x-k8s.io/reason" ) $defaultReason }}
      {{ $failureMessage := or ( index $annotations "pod-container-running-failed.stage.kwok.x-k8s.io/message" ) $defaultMessage }}
      {{ $failureExitCode := or ( index $annotations "pod-container-running-failed.stage.kwok.x-k8s.io/exit-code" ) $defaultExitCode }}
      conditions:
      - lastProbeTime: null
        lastTransitionTime: {{ $now | Quote }}
        status: "True"
        reason: ""
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ""
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ""
        type: ContainersReady
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      {{ if or ( not $containerName ) ( eq $item.name $containerName ) }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: {{ $failureExitCode }}
            finishedAt: {{ $now | Quote }}
            reason: {{ $failureReason }}
            message: {{ $failureMessage }}
            startedAt: {{ $now | Quote }}
      {{ else }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Failed
      startTime: {{ $now | Quote }}
`;

/** Nestor's stages: a crash loop, and its end. */
const NESTOR_STAGES = `
---
# Nestor's: a container that keeps exiting, as kubelet reports it between restarts.
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-crash-loop
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.labels["pod-crash-loop.stage.nestor.dev"]'
      operator: 'In'
      values:
      - 'true'
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
  delay:
    durationMilliseconds: 1000
    durationFrom:
      expressionFrom: '.metadata.annotations["pod-crash-loop.stage.nestor.dev/delay"]'
  weight: 10000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      {{ $annotations := or .metadata.annotations dict }}
      {{ $exitCode := or ( index $annotations "pod-crash-loop.stage.nestor.dev/exit-code" ) 1 }}
      {{ $reason := or ( index $annotations "pod-crash-loop.stage.nestor.dev/reason" ) "Error" }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      {{ $name := .name }}
      {{ $restarts := 1 }}
      {{ range $root.status.containerStatuses }}
      {{ if eq .name $name }}
      {{ $restarts = add1 ( int .restartCount ) }}
      {{ end }}
      {{ end }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: {{ $restarts }}
        lastState:
          terminated:
            exitCode: {{ $exitCode }}
            reason: {{ $reason | Quote }}
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
        state:
          waiting:
            reason: CrashLoopBackOff
            message: {{ printf "back-off restarting failed container %s" .name | Quote }}
      {{ end }}
---
# Nestor's: the crash loop is over (its label removed), the containers run and are ready.
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-crash-loop-over
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.labels["pod-crash-loop.stage.nestor.dev"]'
      operator: 'DoesNotExist'
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.containerStatuses.[].state.waiting.reason'
      operator: 'In'
      values:
      - 'CrashLoopBackOff'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      containerStatuses:
      {{ range .status.containerStatuses }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        started: true
        restartCount: {{ .restartCount }}
        {{ with .lastState }}
        lastState: {{ toJson . }}
        {{ end }}
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
`;

/** The kwok configuration file (`kwok --config`): every stage, as YAML documents. */
export function kwokStagesYaml(): string {
  return KWOK_STAGES + NESTOR_STAGES;
}
