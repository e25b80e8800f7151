{{- /* indexPage lists every API group and its kinds (docs/api/README.md). */ -}}
{{- define "indexPage" -}}
{{- $gvs := . -}}
{{ template "notice" }}

# API reference

Every field of every Terraplane kind, generated from the Go types in `apis/` by
`make generate`. The guides to each kind, with examples, are in [docs/kinds](../kinds/README.md).

| API group | kinds |
| --- | --- |
{{ range $gvs -}}
{{- $gv := . -}}
| [{{ $gv.GroupVersionString }}]({{ $gv.Group }}.md) | {{ range $i, $k := $gv.SortedKinds }}{{ if not (hasSuffix "List" $k) }}[{{ $k }}]({{ $gv.Group }}.md#{{ lower $k }}) {{ end }}{{ end }}|
{{ end }}
[Types every group shares](common.md): references, statuses and policies from `apis/common`.
{{ end -}}
