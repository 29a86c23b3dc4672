{{/* The release's full name: the release name when it contains the chart's. */}}
{{- define "loadaware.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "loadaware.serviceAccountName" -}}
{{- default (include "loadaware.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* Labels of every object; the selector labels pick the pods. */}}
{{- define "loadaware.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/part-of: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "loadaware.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "loadaware.component" -}}
{{- if eq .Values.mode "serve" }}serve{{ else }}run-once{{ end -}}
{{- end -}}

{{- define "loadaware.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "loadaware.webhookSecretName" -}}
{{- default (printf "%s-webhook" (include "loadaware.fullname" .)) .Values.webhook.existingSecret -}}
{{- end -}}

{{- define "loadaware.webhookDir" -}}/var/run/secrets/loadaware/webhook{{- end -}}

{{/*
The policy as the pods read it: the values' policy with what the chart decides
(dryRun, its namespace, the mounted webhook token, the Prometheus token's Secret).
*/}}
{{- define "loadaware.policy" -}}
{{- $policy := deepCopy .Values.policy -}}
{{- $_ := set $policy "dryRun" .Values.dryRun -}}
{{- $state := deepCopy (default (dict) $policy.state) -}}
{{- $_ := set $state "namespace" (default .Release.Namespace $state.namespace) -}}
{{- $_ := set $policy "state" $state -}}
{{- $serve := deepCopy (default (dict) $policy.serve) -}}
{{- $election := deepCopy (default (dict) $serve.leaderElection) -}}
{{- $_ := set $election "leaseNamespace" (default .Release.Namespace $election.leaseNamespace) -}}
{{- $_ := set $serve "leaderElection" $election -}}
{{- if eq .Values.mode "serve" -}}
{{- $webhook := deepCopy (default (dict) $serve.webhook) -}}
{{- $_ := set $webhook "tokenFile" (printf "%s/token" (include "loadaware.webhookDir" .)) -}}
{{- $_ := set $serve "webhook" $webhook -}}
{{- end -}}
{{- $_ := set $policy "serve" $serve -}}
{{- if .Values.prometheusToken.enabled -}}
{{- $metrics := deepCopy (default (dict) $policy.metrics) -}}
{{- if not $metrics.prometheus -}}
{{- fail "prometheusToken.enabled needs policy.metrics.prometheus" -}}
{{- end -}}
{{- $prometheus := deepCopy $metrics.prometheus -}}
{{- $reference := dict "namespace" .Release.Namespace "name" .Values.prometheusToken.secretName "key" .Values.prometheusToken.key -}}
{{- $_ := set $prometheus "authToken" (dict "secretReference" $reference) -}}
{{- $_ := set $metrics "prometheus" $prometheus -}}
{{- $_ := set $policy "metrics" $metrics -}}
{{- end -}}
{{- toYaml $policy -}}
{{- end -}}

{{/* The port serve listens on: the policy's serve.listen. */}}
{{- define "loadaware.port" -}}
{{- $policy := include "loadaware.policy" . | fromYaml -}}
{{- $listen := default "0.0.0.0:8080" $policy.serve.listen -}}
{{- last (splitList ":" $listen) -}}
{{- end -}}

{{- define "loadaware.leaderElection" -}}
{{- $policy := include "loadaware.policy" . | fromYaml -}}
{{- $election := $policy.serve.leaderElection -}}
{{- if and (eq .Values.mode "serve") (or (not (hasKey $election "enabled")) $election.enabled) }}true{{ end -}}
{{- end -}}

{{/* The pod template's spec, shared by the Deployment and the CronJob's Jobs. */}}
{{- define "loadaware.podSpec" -}}
serviceAccountName: {{ include "loadaware.serviceAccountName" . }}
automountServiceAccountToken: true
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
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
{{- end -}}

{{- define "loadaware.podMetadata" -}}
labels:
  {{- include "loadaware.selectorLabels" . | nindent 2 }}
  app.kubernetes.io/component: {{ include "loadaware.component" . }}
  {{- with .Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  # loadaware never moves itself: a round must not evict the pod running it.
  loadaware.io/evict: "never"
  # A changed policy rolls the pods.
  checksum/policy: {{ include "loadaware.policy" . | sha256sum }}
  {{- with .Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
