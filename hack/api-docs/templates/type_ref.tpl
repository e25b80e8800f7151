{{- /* typeRef names type .t as seen from the page of group .group: a link to the type's
section on its group's page, or plain text for basic and Kubernetes types (the reference
links nowhere outside the repository). A type of apis/X/Y/v1alpha1 is on the page of
group Y.X.terraplane.io; one of apis/common on common.md. */ -}}
{{- define "typeRef" -}}
{{- $t := .t -}}{{- $group := .group -}}
{{- if eq (int $t.Kind) 3 -}}
object (keys: {{ template "typeRef" (dict "t" $t.KeyType "group" $group) }}, values: {{ template "typeRef" (dict "t" $t.ValueType "group" $group) }})
{{- else if and (eq (int $t.Kind) 5) $t.UnderlyingType -}}
{{ template "typeRef" (dict "t" $t.UnderlyingType "group" $group) }} array
{{- else if $t.IsBasic -}}
{{ markdownRenderType $t }}
{{- else if not (hasPrefix "terraplane.io/terraplane/apis/" $t.Package) -}}
{{ $t.Name }}
{{- else -}}
{{- $parts := splitList "/" (trimPrefix "terraplane.io/terraplane/apis/" $t.Package) | initial -}}
{{- $page := reverse $parts | join "." | printf "%s.terraplane.io" -}}
{{- if eq (join "/" $parts) "common" }}{{ $page = "common" }}{{ end -}}
{{- if eq $page $group -}}
{{ markdownRenderLocalLink $t.Name }}
{{- else -}}
[{{ $t.Name }}]({{ $page }}.md#{{ lower $t.Name }})
{{- end -}}
{{- end -}}
{{- end -}}
