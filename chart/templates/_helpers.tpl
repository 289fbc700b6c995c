{{/*
Helpers of the skyhook chart: the templates load config/'s manifests from files/ (byte copies made
by `npm run gen:chart`) and patch them, so config/ stays the one source of every manifest.
*/}}

{{/* Labels Helm adds to every object (beside config/'s own). */}}
{{- define "skyhook.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "skyhook.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
The documents of a files/ manifest (a file may hold several, separated by ---), each as a map.
Returns them as YAML under `docs:` because Helm templates can only return strings.
*/}}
{{- define "skyhook.docs" -}}
{{- $docs := list }}
{{- range $text := regexSplit "(?m)^---\\s*$" (.root.Files.Get .file) -1 }}
{{- $doc := fromYaml $text }}
{{- if $doc.kind }}{{ $docs = append $docs $doc }}{{ end }}
{{- end }}
{{- toYaml (dict "docs" $docs) }}
{{- end }}

{{/*
One object as a YAML document: in the release's namespace (unless cluster-scoped), with Helm's
labels and `extraLabels` added, ServiceAccount subjects pointed at the release's namespace (what
kustomize's `namespace:` does for config/default).
*/}}
{{- define "skyhook.object" -}}
{{- $obj := .obj }}
{{- $meta := $obj.metadata }}
{{- if not (has $obj.kind (list "ClusterRole" "ClusterRoleBinding" "CustomResourceDefinition" "Namespace")) }}
{{- $_ := set $meta "namespace" .root.Release.Namespace }}
{{- end }}
{{- $labels := merge (dict) (fromYaml (include "skyhook.labels" .root)) (.extraLabels | default dict) ($meta.labels | default dict) }}
{{- $_ := set $meta "labels" $labels }}
{{- range $subject := $obj.subjects | default list }}
{{- if eq $subject.kind "ServiceAccount" }}{{ $_ := set $subject "namespace" $.root.Release.Namespace }}{{ end }}
{{- end }}
---
{{ toYaml $obj | trim }}
{{ end }}

{{/* Every document of a files/ manifest, rendered with skyhook.object. */}}
{{- define "skyhook.file" -}}
{{- range $obj := (fromYaml (include "skyhook.docs" .)).docs }}
{{- include "skyhook.object" (dict "root" $.root "obj" $obj "extraLabels" $.extraLabels) }}
{{- end }}
{{- end }}
