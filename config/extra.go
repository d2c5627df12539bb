package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DecodeElection decodes the value of election.KEY, a key allowed by
// Options.ElectionKeys, into into (a pointer to a struct with yaml tags),
// as strictly as the rest of the file: an unknown key, a wrong type or a
// bad duration is an error naming the file, the line and the key path. It
// reports whether the key was in the file; into is untouched if not.
func (f *File) DecodeElection(key string, into any) (bool, error) {
	n, ok := f.ElectionExtra[key]
	if !ok || n == nil || isNull(n) {
		return false, nil
	}
	path := "election." + key
	d := &decoder{name: f.Path, f: f}
	checkKnownFields(d, n, path, reflect.TypeOf(into))
	if len(d.errs) > 0 {
		return true, errors.Join(d.errs...)
	}
	if err := n.Decode(into); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, msg := range te.Errors {
				d.errs = append(d.errs, lineError(f.Path, path, n.Line, msg))
			}
			return true, errors.Join(d.errs...)
		}
		return true, lineError(f.Path, path, n.Line, err.Error())
	}
	return true, nil
}

var yamlTypeLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// lineError turns yaml's "line N: msg" into "file:N: path: msg".
func lineError(file, path string, line int, msg string) error {
	if m := yamlTypeLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s: %s", file, m[1], path, m[2])
	}
	return fmt.Errorf("%s:%d: %s: %s", file, line, path, msg)
}

// checkKnownFields reports keys of the mapping n that t (a struct, or a
// pointer to one) has no yaml field for, recursing into nested structs,
// and records each key's line.
func checkKnownFields(d *decoder, n *yaml.Node, path string, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	fields := map[string]reflect.Type{}
	var known []string
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		fields[name] = sf.Type
		known = append(known, name)
	}
	d.mapping(n, path, known, func(key string, v *yaml.Node) {
		if v.Kind == yaml.MappingNode {
			checkKnownFields(d, v, path+"."+key, fields[key])
		}
	})
}
