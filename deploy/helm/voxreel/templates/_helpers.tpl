{{- define "voxreel.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "voxreel.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "voxreel.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "voxreel.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component: (dict "root" $ "component" "api") */}}
{{- define "voxreel.selectorLabels" -}}
app.kubernetes.io/name: {{ include "voxreel.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "voxreel.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "voxreel.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "voxreel.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* A worker's SHUTDOWN_GRACE_MS: given, or the longest job deadline plus drainExtraMs. */}}
{{- define "voxreel.workerGraceMs" -}}
{{- if .Values.worker.shutdownGraceMs }}
{{- int .Values.worker.shutdownGraceMs }}
{{- else }}
{{- $video := int (default "300000" .Values.env.VIDEO_TIMEOUT_MS) }}
{{- $tts := int (default "60000" .Values.env.TTS_TIMEOUT_MS) }}
{{- add (max $video $tts) (int .Values.worker.drainExtraMs) }}
{{- end }}
{{- end }}

{{/* Whole seconds, rounded up, of a number of milliseconds. */}}
{{- define "voxreel.ceilSeconds" -}}
{{- div (add (int .) 999) 1000 }}
{{- end }}

{{/* Settings the chart owns; `env` must not set them too. */}}
{{- define "voxreel.ownedEnv" -}}
{{- list "PORT" "HOST" "OUTPUT_DIR" "ASSETS_DIR" "SCRATCH_DIR" "REDIS_URL" "QUEUE_NAME" "STORAGE" "S3_BUCKET" "S3_PREFIX" "S3_ENDPOINT" "S3_REGION" "S3_FORCE_PATH_STYLE" "S3_PRESIGN_SECONDS" "CDN_URL" "API_KEYS" "WEBHOOK_SECRET" "SHUTDOWN_GRACE_MS" "WORKER_PORT" | toJson }}
{{- end }}

{{/* Environment that the API and the workers share: the ConfigMap, and the Secrets' keys. */}}
{{- define "voxreel.sharedEnv" -}}
- name: HOST
  value: "0.0.0.0"
{{- if .Values.redis.existingSecret }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.existingSecretKey }}
{{- end }}
{{- if and (eq .Values.storage.kind "s3") .Values.storage.s3.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ .Values.storage.s3.existingSecret }}
      key: {{ .Values.storage.s3.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.storage.s3.existingSecret }}
      key: {{ .Values.storage.s3.secretAccessKeyKey }}
{{- end }}
{{- if .Values.auth.existingSecret }}
- name: API_KEYS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.auth.existingSecret }}
      key: {{ .Values.auth.apiKeysKey }}
{{- end }}
{{- if .Values.webhooks.existingSecret }}
- name: WEBHOOK_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ .Values.webhooks.existingSecret }}
      key: {{ .Values.webhooks.secretKey }}
{{- end }}
{{- if .Values.assets.existingClaim }}
- name: ASSETS_DIR
  value: /assets
{{- end }}
- name: SCRATCH_DIR
  value: /tmp/voxreel
{{- end }}

{{/* Volumes both kinds of pod mount: /data, /tmp, and the shared assets. */}}
{{- define "voxreel.volumes" -}}
- name: data
{{- if .Values.persistence.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.persistence.existingClaim }}
{{- else }}
  emptyDir:
    sizeLimit: {{ .Values.persistence.sizeLimit }}
{{- end }}
- name: scratch
  emptyDir:
    sizeLimit: {{ .Values.scratch.sizeLimit }}
    {{- with .Values.scratch.medium }}
    medium: {{ . }}
    {{- end }}
{{- if .Values.assets.existingClaim }}
- name: assets
  persistentVolumeClaim:
    claimName: {{ .Values.assets.existingClaim }}
{{- end }}
{{- end }}

{{- define "voxreel.volumeMounts" -}}
- name: data
  mountPath: /data
- name: scratch
  mountPath: /tmp
{{- if .Values.assets.existingClaim }}
- name: assets
  mountPath: /assets
{{- end }}
{{- end }}

{{/* Settings the service would refuse at start-up, refused here first with the value to set. */}}
{{- define "voxreel.validate" -}}
{{- if not (or .Values.redis.url .Values.redis.existingSecret) }}
{{- fail "redis.url or redis.existingSecret is required: workers take their jobs from Redis (REDIS_URL)" }}
{{- end }}
{{- if not (has .Values.storage.kind (list "s3" "local")) }}
{{- fail "storage.kind must be s3 or local" }}
{{- end }}
{{- if and (eq .Values.storage.kind "s3") (not .Values.storage.s3.bucket) }}
{{- fail "storage.s3.bucket is required with storage.kind=s3 (S3_BUCKET)" }}
{{- end }}
{{- if and (eq .Values.storage.kind "s3") (eq (int .Values.storage.s3.presignSeconds) 0) (not .Values.cdnUrl) }}
{{- fail "cdnUrl is required with storage.kind=s3 and storage.s3.presignSeconds 0: the bucket's public or CDN address (CDN_URL)" }}
{{- end }}
{{- if and (eq .Values.storage.kind "local") (not .Values.cdnUrl) }}
{{- fail "cdnUrl is required with storage.kind=local: workers write the files' public URLs (CDN_URL)" }}
{{- end }}
{{- if and (eq .Values.storage.kind "local") (not .Values.persistence.existingClaim) }}
{{- fail "persistence.existingClaim is required with storage.kind=local: a ReadWriteMany volume that the API serves and every worker writes" }}
{{- end }}
{{- if not (has .Values.autoscaling.mode (list "hpa" "keda" "none")) }}
{{- fail "autoscaling.mode must be hpa, keda or none" }}
{{- end }}
{{- $owned := include "voxreel.ownedEnv" . | fromJsonArray }}
{{- range $name, $value := .Values.env }}
{{- if has $name $owned }}
{{- fail (printf "env.%s is set by the chart from its own values (see values.yaml); set it there" $name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* A pod's annotations: (dict "root" $ "port" 3000 "extra" .Values.api.podAnnotations) */}}
{{- define "voxreel.podAnnotations" -}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
{{- if .root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- with .extra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* What the API's and the workers' pods share before their containers. */}}
{{- define "voxreel.podCommon" -}}
serviceAccountName: {{ include "voxreel.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* A container's probes on its named port: started (engines, the start-up voice's warm-up), alive, ready. */}}
{{- define "voxreel.probes" -}}
# Start-up warms a voice first (ENGINE_START_TIMEOUT_MS, 60 s, per engine try): three minutes before liveness counts.
startupProbe:
  httpGet: { path: /healthz, port: {{ . }} }
  periodSeconds: 5
  failureThreshold: 36
livenessProbe:
  httpGet: { path: /healthz, port: {{ . }} }
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
# 503 while the start-up voice warms, Redis does not answer, or free disk is under MIN_FREE_DISK_MB.
readinessProbe:
  httpGet: { path: /readyz, port: {{ . }} }
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end }}

{{/* Where a component's pods may run: its nodeSelector, affinity and tolerations. */}}
{{- define "voxreel.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
