package argocd

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Health is what a health script returns.
type Health struct {
	// Status is Healthy, Progressing, Degraded, Suspended or Missing.
	Status string
	// Message says why.
	Message string
}

// Eval runs script over obj (an object as unstructured JSON) as Argo CD does: in
// gopher-lua, with the base, table, string and math libraries, obj as a global table,
// and the returned table read as the health.
func Eval(script string, obj map[string]any) (Health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, fmt.Errorf("run health script: %w", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("health script returned %s, not a table", l.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	switch h.Status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing":
		return h, nil
	}
	return Health{}, fmt.Errorf("health script returned status %q", h.Status)
}

// toLua converts a JSON value to Lua as Argo CD does: objects and arrays to tables
// (arrays from 1), numbers, strings and booleans to their Lua values, null to nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(toLua(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}
