package kref

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// UsageError is a command line that names a resource the wrong way; the command exits 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// Args joins a resource named as one argument (KIND/NAME) or two (KIND NAME) into KIND/NAME.
func Args(args []string) (string, error) {
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		return args[0], nil
	case len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/"):
		return args[0] + "/" + args[1], nil
	case len(args) == 1:
		return "", Usagef("name the resource as KIND/NAME (or KIND NAME), e.g. bucket/photos, not %q", args[0])
	}
	return "", Usagef("name one resource, as KIND/NAME or KIND NAME (got %d arguments)", len(args))
}

// Split parses KIND/NAME.
func Split(ref string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
		return "", "", Usagef("name the resource as KIND/NAME, e.g. bucket/photos, not %q", ref)
	}
	return kind, name, nil
}

// Mapping finds the kind a command line names, as kubectl does: first as a resource
// (plural, singular or short name, optionally resource.group or resource.version.group),
// then as a kind (Kind or Kind.group).
func Mapping(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var gvk schema.GroupVersionKind
	var firstErr error
	if full != nil {
		gvk, _ = mapper.KindFor(*full)
	}
	if gvk.Empty() {
		gvk, firstErr = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() && gr.Group == "" {
		if err := unambiguous(mapper, arg, gr); err != nil {
			return nil, err
		}
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullKind, gk := schema.ParseKindArg(arg)
	if fullKind != nil {
		if m, err := mapper.RESTMapping(fullKind.GroupKind(), fullKind.Version); err == nil {
			return m, nil
		}
	}
	if m, err := mapper.RESTMapping(gk); err == nil {
		return m, nil
	}
	var ambiguous *meta.AmbiguousResourceError
	switch {
	case errors.As(firstErr, &ambiguous):
		return nil, fmt.Errorf("%q names more than one kind: qualify it with its group, as one of %s", arg, candidates(ambiguous.MatchingKinds))
	case firstErr != nil && !meta.IsNoMatchError(firstErr):
		return nil, fmt.Errorf("find kind %q: %w", arg, firstErr) // discovery failed
	}
	return nil, fmt.Errorf("the server has no resource type %q", arg)
}

// unambiguous refuses a resource name typed without its group that more than one
// group serves (a prioritised mapper would pick one of them silently).
func unambiguous(mapper meta.RESTMapper, arg string, gr schema.GroupResource) error {
	kinds, err := mapper.KindsFor(gr.WithVersion(""))
	if err != nil {
		return nil
	}
	groups := map[string]bool{}
	var distinct []schema.GroupVersionKind
	for _, k := range kinds {
		if !groups[k.Group] {
			groups[k.Group] = true
			distinct = append(distinct, k)
		}
	}
	if len(distinct) > 1 {
		return fmt.Errorf("%q names more than one kind: qualify it with its group, as one of %s", arg, candidates(distinct))
	}
	return nil
}

// candidates lists kinds as resource.group names a user can type.
func candidates(kinds []schema.GroupVersionKind) string {
	var out []string
	for _, k := range kinds {
		out = append(out, strings.ToLower(k.Kind)+"."+k.Group)
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ", ")
}

// Namespaces are where commands act by default.
type Namespaces struct {
	// Explicit is -n, when given.
	Explicit string
	// Context is the kubeconfig context's namespace ("default" when it names none).
	Context string
	// Admin is the admin namespace (--admin-namespace): managed resources, Providers and
	// non-portable classes live there.
	Admin string
}

// For is the namespace a command acts in for a kind: -n, else the admin namespace for
// admin kinds, else the context's.
func (n Namespaces) For(admin bool) string {
	switch {
	case n.Explicit != "":
		return n.Explicit
	case admin:
		return n.Admin
	}
	return n.Context
}

// Categories Terraplane's CRDs carry (kubectl get managed lists every managed resource).
const (
	CategoryClaim    = "claim"
	CategoryClass    = "class"
	CategoryManaged  = "managed"
	CategoryProvider = "provider"
	CategoryWorkload = "workload"
)

// AdminKind reports whether a kind with these categories lives in the admin namespace:
// managed resources, Providers and ProviderConfigs, and non-portable classes (which a
// portable class's classRef names; nonPortableClass says whether the kind is one).
func AdminKind(categories []string, nonPortableClass bool) bool {
	return slices.Contains(categories, CategoryManaged) || slices.Contains(categories, CategoryProvider) ||
		nonPortableClass && slices.Contains(categories, CategoryClass)
}
