{{/* The labels every object of the chart carries. */}}
{{- define "virt-reconciler.labels" -}}
app.kubernetes.io/part-of: virt-reconciler
{{- end }}

{{/* The relay's own labels (its selector is the name alone: a selector never changes). */}}
{{- define "virt-reconciler.relayLabels" -}}
app.kubernetes.io/name: virt-reconciler-relay
{{ include "virt-reconciler.labels" . }}
{{- end }}

{{/* The registry's controllers and their rules (files/controllers.json, npm run gen:kubernetes). */}}
{{- define "virt-reconciler.controllers" -}}
{{- .Files.Get "files/controllers.json" -}}
{{- end }}

{{/* A list of strings as a YAML flow sequence, ["a", "b"], as RBAC rules are written by hand. */}}
{{- define "virt-reconciler.flowList" -}}
{{- toJson . | replace "\",\"" "\", \"" -}}
{{- end }}
