{{- /* commonPage renders every type of apis/common that a group's type reaches. */ -}}
{{- define "commonPage" -}}
{{- $gvs := . -}}
{{- $seen := dict -}}
{{- range $gvs }}{{ range .SortedTypes }}{{ range .Members }}
{{- template "collectCommon" (dict "t" .Type "seen" $seen) -}}
{{- end }}{{ end }}{{ end -}}
{{ template "notice" }}

# Types every group shares

[API reference](README.md)

The references, statuses and policies in `apis/common/v1alpha1` that claims, classes,
managed resources and Providers of every group embed.

## Types
{{ range keys $seen | sortAlpha }}
{{ template "type" (dict "t" (get $seen .) "group" "common") }}
{{- end }}
{{ end -}}

{{- /* collectCommon adds .t to .seen when it is a type of apis/common, then its fields'
types and the common types that embed it (ManagedSpec, ClaimSpec...); slices, maps and
pointers are looked through. */ -}}
{{- define "collectCommon" -}}
{{- $t := .t -}}{{- $seen := .seen -}}
{{- if $t -}}
{{- if and (hasSuffix "/apis/common/v1alpha1" $t.Package) (not (has (int $t.Kind) (list 3 4 5))) -}}
{{- if not (hasKey $seen $t.Name) -}}
{{- $_ := set $seen $t.Name $t -}}
{{- range $t.Members }}{{ template "collectCommon" (dict "t" .Type "seen" $seen) }}{{ end -}}
{{- range $t.References }}{{ template "collectCommon" (dict "t" . "seen" $seen) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if $t.UnderlyingType }}{{ template "collectCommon" (dict "t" $t.UnderlyingType "seen" $seen) }}{{ end -}}
{{- if $t.ValueType }}{{ template "collectCommon" (dict "t" $t.ValueType "seen" $seen) }}{{ end -}}
{{- end -}}
{{- end -}}
