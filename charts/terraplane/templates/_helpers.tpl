{{/* The release's full name, used for every object. */}}
{{- define "terraplane.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "terraplane.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "terraplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Labels that select the controller's pods. */}}
{{- define "terraplane.selectorLabels" -}}
app.kubernetes.io/name: terraplane
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* A label selector of the controller's pods alone (the stack manager's pods carry
the same selector labels and a component). */}}
{{- define "terraplane.controllerSelector" -}}
matchLabels:
  {{- include "terraplane.selectorLabels" . | nindent 2 }}
matchExpressions:
  - {key: app.kubernetes.io/component, operator: DoesNotExist}
{{- end -}}

{{/* The ServiceAccount the controller runs as. */}}
{{- define "terraplane.serviceAccountName" -}}
{{- default (include "terraplane.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* A volume: emptyDir, or a PersistentVolumeClaim (the chart's or an existing one). */}}
{{- define "terraplane.volume" -}}
- name: {{ .name }}
{{- if eq .spec.type "persistentVolumeClaim" }}
  persistentVolumeClaim:
    claimName: {{ .spec.existingClaim | default (printf "%s-%s" .fullname .name) }}
{{- else if and (eq .spec.type "emptyDir") .spec.sizeLimit }}
  emptyDir:
    sizeLimit: {{ .spec.sizeLimit }}
{{- else if eq .spec.type "emptyDir" }}
  emptyDir: {}
{{- else }}
{{- fail (printf "%s.type must be emptyDir or persistentVolumeClaim, not %q" .name .spec.type) }}
{{- end }}
{{- end -}}

{{/* The namespaces whose Secrets the controller reads and writes, comma-separated. */}}
{{- define "terraplane.servedNamespaces" -}}
{{- prepend (without .Values.tenancy.namespaces .Release.Namespace) .Release.Namespace | uniq | join "," -}}
{{- end -}}

{{/* The stack manager's ServiceAccount. */}}
{{- define "terraplane.stackManagerName" -}}
{{- printf "%s-stack-manager" (include "terraplane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The namespace of the stack manager (stackManager.namespace, else the release's). */}}
{{- define "terraplane.stackManagerNamespace" -}}
{{- default .Release.Namespace .Values.stackManager.namespace -}}
{{- end -}}

{{/* The pod settings of runner Deployments, as the JSON of --runner-pod: the
controller's own, each unless runners.* sets its own, and runners.resources. */}}
{{- define "terraplane.runnerPod" -}}
{{- $r := .Values.runners -}}
{{- $s := dict "resources" $r.resources -}}
{{- $pairs := list
  (list "imagePullSecrets" .Values.imagePullSecrets $r.imagePullSecrets)
  (list "imagePullPolicy" .Values.image.pullPolicy $r.pullPolicy)
  (list "env" .Values.extraEnv $r.extraEnv)
  (list "volumes" .Values.extraVolumes $r.extraVolumes)
  (list "volumeMounts" .Values.extraVolumeMounts $r.extraVolumeMounts)
  (list "nodeSelector" .Values.nodeSelector $r.nodeSelector)
  (list "tolerations" .Values.tolerations $r.tolerations)
  (list "affinity" .Values.affinity $r.affinity)
  (list "priorityClassName" .Values.priorityClassName $r.priorityClassName) -}}
{{- range $pairs -}}
{{- $v := index . 2 -}}
{{- if kindIs "invalid" $v }}{{ $v = index . 1 }}{{ end -}}
{{- if $v }}{{ $_ := set $s (index . 0) $v }}{{ end -}}
{{- end -}}
{{- toJson $s -}}
{{- end -}}

{{/* Every Terraplane API group, as a YAML list. */}}
{{- define "terraplane.apiGroups" -}}
- apiextensions.terraplane.io
- aws.terraplane.io
- azure.terraplane.io
- cache.aws.terraplane.io
- cache.azure.terraplane.io
- cache.gcp.terraplane.io
- cache.terraplane.io
- compute.aws.terraplane.io
- compute.azure.terraplane.io
- compute.gcp.terraplane.io
- compute.terraplane.io
- database.aws.terraplane.io
- database.azure.terraplane.io
- database.gcp.terraplane.io
- database.mysql.terraplane.io
- database.postgresql.terraplane.io
- database.terraplane.io
- gcp.terraplane.io
- kubernetes.terraplane.io
- mysql.terraplane.io
- policy.terraplane.io
- postgresql.terraplane.io
- scaling.terraplane.io
- stacks.terraplane.io
- storage.aws.terraplane.io
- storage.azure.terraplane.io
- storage.gcp.terraplane.io
- storage.terraplane.io
- terraform.terraplane.io
- workload.terraplane.io
{{- end -}}
