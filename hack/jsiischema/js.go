package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// jsAttr is what the generated JavaScript says of one attribute of a class: its name
// and flags (from the comment above its getter), and whether it wraps a set.
type jsAttr struct {
	Snake                        string
	Computed, Optional, Required bool
	Set                          bool
}

// jsHCL is what a struct's HCL synthesis says of one argument.
type jsHCL struct {
	IsBlock bool
	Type    string // simple, list, set, map, struct
}

// jsFile is what one lib/<resource>/index.js holds: per class the attributes by their
// camelCase name, and per struct (or resource class) the HCL shape by snake_case name.
type jsFile struct {
	attrs map[string]map[string]jsAttr
	hcl   map[string]map[string]jsHCL
}

var (
	classLine   = regexp.MustCompile(`^class (\w+) extends`)
	hclFunc     = regexp.MustCompile(`^function (\w+)ToHclTerraform\(`)
	flagComment = regexp.MustCompile(`^\s*// (\w+) - computed: (true|false), optional: (true|false), required: (true|false)$`)
	getterLine  = regexp.MustCompile(`^\s*get (\w+)\(\) \{$`)
	fieldLine   = regexp.MustCompile(`^\s*this\._(\w+) = new [\w.]+\(this, "\w+"(?:, (true|false))?\);$`)
	hclKey      = regexp.MustCompile(`^\s*(\w+): \{$`)
	hclIsBlock  = regexp.MustCompile(`^\s*isBlock: (true|false),$`)
	hclType     = regexp.MustCompile(`^\s*type: "(\w+)",$`)
)

// readJS reads the generated JavaScript of one resource: dir/index.js and, for a large
// one, the structs split out into dir/index-structs/*.js.
func readJS(dir string) (*jsFile, error) {
	js := &jsFile{attrs: map[string]map[string]jsAttr{}, hcl: map[string]map[string]jsHCL{}}
	more, _ := filepath.Glob(filepath.Join(dir, "index-structs", "*.js"))
	for _, path := range append([]string{filepath.Join(dir, "index.js")}, more...) {
		if err := js.read(path); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return js, nil
}

// read adds what one JavaScript file says.
func (js *jsFile) read(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var owner, hclName string
	var pending *jsAttr
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case classLine.MatchString(line):
			owner = classLine.FindStringSubmatch(line)[1]
		case hclFunc.MatchString(line):
			n := hclFunc.FindStringSubmatch(line)[1]
			owner = strings.ToUpper(n[:1]) + n[1:]
		case strings.HasPrefix(line, "function "):
			owner = ""
		}
		if m := flagComment.FindStringSubmatch(line); m != nil {
			pending = &jsAttr{Snake: m[1], Computed: m[2] == "true", Optional: m[3] == "true", Required: m[4] == "true"}
			continue
		}
		if pending != nil {
			if m := fieldLine.FindStringSubmatch(line); m != nil {
				pending.Set = m[2] == "true"
				js.attr(owner, m[1], *pending)
			} else if m := getterLine.FindStringSubmatch(line); m != nil && sc.Scan() {
				pending.Set = strings.Contains(sc.Text(), "cdktf.Fn.tolist(")
				js.attr(owner, m[1], *pending)
			}
			pending = nil
			continue
		}
		if m := hclKey.FindStringSubmatch(line); m != nil {
			hclName = m[1]
		} else if m := hclIsBlock.FindStringSubmatch(line); m != nil && hclName != "" {
			js.shape(owner, hclName, func(h *jsHCL) { h.IsBlock = m[1] == "true" })
		} else if m := hclType.FindStringSubmatch(line); m != nil && hclName != "" {
			js.shape(owner, hclName, func(h *jsHCL) { h.Type = m[1] })
			hclName = ""
		}
	}
	return sc.Err()
}

func (js *jsFile) attr(owner, camel string, a jsAttr) {
	if js.attrs[owner] == nil {
		js.attrs[owner] = map[string]jsAttr{}
	}
	js.attrs[owner][camel] = a
}

func (js *jsFile) shape(owner, name string, set func(*jsHCL)) {
	if js.hcl[owner] == nil {
		js.hcl[owner] = map[string]jsHCL{}
	}
	h := js.hcl[owner][name]
	set(&h)
	js.hcl[owner][name] = h
}
