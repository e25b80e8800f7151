{{- /* type renders one type (.t) on the page of group .group. */ -}}
{{- define "type" -}}
{{- $type := .t -}}{{- $group := .group -}}
{{- if markdownShouldRenderType $type -}}
### {{ $type.Name }}
{{ if $type.IsAlias }}
_Underlying type:_ {{ template "typeRef" (dict "t" $type.UnderlyingType "group" $group) }}
{{ end }}
{{ $type.Doc }}
{{ if $type.Validation }}
_Validation:_
{{- range $type.Validation }}
- {{ . }}
{{- end }}
{{ end }}
{{- $refs := list -}}
{{- range $type.SortedReferences }}{{ if and (markdownShouldRenderType .) (not (and .GVK (hasSuffix "List" .Name))) }}{{ $refs = append $refs . }}{{ end }}{{ end -}}
{{- if $refs }}
_Appears in:_
{{- range $refs }}
- {{ template "typeRef" (dict "t" . "group" $group) }}
{{- end }}
{{ end }}
{{- if $type.Members }}
| Field | Description | Default | Validation |
| --- | --- | --- | --- |
{{ if $type.GVK -}}
| `apiVersion` _string_ | `{{ $type.GVK.Group }}/{{ $type.GVK.Version }}` | | |
| `kind` _string_ | `{{ $type.GVK.Kind }}` | | |
{{ end -}}
{{ range $type.Members -}}
| `{{ .Name }}` _{{ template "typeRef" (dict "t" .Type "group" $group) }}_ | {{ if eq .Name "metadata" }}Standard Kubernetes object metadata.{{ else }}{{ markdownRenderFieldDoc .Doc }}{{ end }} | {{ markdownRenderDefault .Default }} | {{ range .Validation -}} {{ markdownRenderFieldDoc . }} <br />{{ end }} |
{{ end -}}
{{ end }}
{{- if $type.EnumValues }}
| Value | Description |
| --- | --- |
{{ range $type.EnumValues -}}
| `{{ .Name }}` | {{ markdownRenderFieldDoc .Doc }} |
{{ end -}}
{{ end }}
{{- end -}}
{{- end -}}
