{{- define "gvDetails" -}}
{{- $gv := . -}}
{{ template "notice" }}

# {{ $gv.GroupVersionString }}

[API reference](README.md) · [types every group shares](common.md)

{{ $gv.Doc }}

{{- if $gv.Kinds }}

## Kinds
{{ range $gv.SortedKinds }}
{{- if not (hasSuffix "List" .) }}
- {{ markdownRenderTypeLink ($gv.TypeForKind .) }}
{{- end }}
{{- end }}
{{- end }}

## Types
{{ range $gv.SortedTypes }}
{{- if not (and .GVK (hasSuffix "List" .Name)) }}
{{ template "type" (dict "t" . "group" $gv.Group) }}
{{- end }}
{{- end }}
{{ end -}}
