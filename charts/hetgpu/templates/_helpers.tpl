{{/* The labels kustomize's `labels:` puts on every object (manifests/base/kustomization.yaml). */}}
{{- define "hetgpu.labels" -}}
app.kubernetes.io/part-of: hetgpu
{{- end }}

{{/* registry/repository:tag, the registry replaced by global.imageRegistry, the tag defaulting to $default. */}}
{{- define "hetgpu.image" -}}
{{- $registry := .global.imageRegistry | default .image.registry -}}
{{- $tag := .image.tag | default .default -}}
{{- if $registry }}{{ $registry }}/{{ end }}{{ .image.repository }}:{{ $tag }}
{{- end }}

{{/* kube-scheduler's tag: the value, else the cluster's version without a provider's suffix (v1.31.4-eks-1 is v1.31.4). */}}
{{- define "hetgpu.kubeSchedulerTag" -}}
{{- .Values.scheduler.image.tag | default (regexFind "^v[0-9]+\\.[0-9]+\\.[0-9]+" .Capabilities.KubeVersion.Version) -}}
{{- end }}

{{/* Whether the cluster serves ValidatingAdmissionPolicy v1: listed by discovery, or Kubernetes 1.30+ (helm template). */}}
{{- define "hetgpu.admissionPolicy" -}}
{{- $mode := toString .Values.admissionPolicy.enabled -}}
{{- if eq $mode "true" -}}true
{{- else if eq $mode "auto" -}}
{{- if or (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy") (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) }}true{{ end -}}
{{- end -}}
{{- end }}

{{/* Whether to render the MutatingAdmissionPolicy of hetgpu's DRA driver: where MutatingAdmissionPolicy v1 is served (1.36+). */}}
{{- define "hetgpu.draPriorityMutation" -}}
{{- $mode := toString .Values.dra.priorityMutation -}}
{{- if eq $mode "true" -}}true
{{- else if eq $mode "auto" -}}
{{- if or (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy") (semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version) }}true{{ end -}}
{{- end -}}
{{- end }}
