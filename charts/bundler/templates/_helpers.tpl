{{/* The release's name, at most 63 characters (a DNS label). */}}
{{- define "bundler.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "bundler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Every pod and Service of the release: what the ServiceMonitor selects. */}}
{{- define "bundler.instanceLabels" -}}
app.kubernetes.io/name: {{ include "bundler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bundler.selectorLabels" -}}
{{ include "bundler.instanceLabels" . }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* The manager Deployment of shard (index) in (list context index): the release's name alone
without shards. */}}
{{- define "bundler.shardName" -}}
{{- $ctx := index . 0 -}}
{{- if gt (int $ctx.Values.shards) 1 -}}
{{- printf "%s-shard-%d" (include "bundler.fullname" $ctx | trunc 50 | trimSuffix "-") (index . 1) -}}
{{- else -}}
{{- include "bundler.fullname" $ctx -}}
{{- end -}}
{{- end -}}

{{/* The label telling the shards' pods apart (none without shards), for (list context index). */}}
{{- define "bundler.shardLabel" -}}
{{- if gt (int (index . 0).Values.shards) 1 -}}
bundler.dev/shard: {{ index . 1 | quote }}
{{- end -}}
{{- end -}}

{{- define "bundler.remoteAgentSelectorLabels" -}}
{{ include "bundler.instanceLabels" . }}
app.kubernetes.io/component: remote-agent
{{- end -}}

{{- define "bundler.metaLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "bundler.labels" -}}
{{ include "bundler.selectorLabels" . }}
{{ include "bundler.metaLabels" . }}
{{- end -}}

{{- define "bundler.remoteAgentLabels" -}}
{{ include "bundler.remoteAgentSelectorLabels" . }}
{{ include "bundler.metaLabels" . }}
{{- end -}}

{{- define "bundler.remoteAgentName" -}}
{{- printf "%s-remote-agent" (include "bundler.fullname" . | trunc 50 | trimSuffix "-") -}}
{{- end -}}

{{- define "bundler.serviceAccountName" -}}
{{- default (include "bundler.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "bundler.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The restricted Pod Security profile: pod level. */}}
{{- define "bundler.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The restricted Pod Security profile: container level; the root filesystem is read-only. */}}
{{- define "bundler.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Liveness and readiness on the health port; readiness: caches synced (a standby is ready). */}}
{{- define "bundler.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: health
  initialDelaySeconds: 15
  periodSeconds: 20
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: health
  periodSeconds: 10
  failureThreshold: 3
{{- end -}}

{{/* Scheduling knobs shared by every pod of the chart. */}}
{{- define "bundler.scheduling" -}}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
