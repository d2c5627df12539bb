package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxErrors caps how many problems one Load reports; past it the rest are
// summarised, so a wrong file does not flood the terminal.
const maxErrors = 20

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse decodes data as a config file named name (used in errors only).
func Parse(name string, data []byte) (*File, error) {
	return noPartial(ParseWith(name, data, Options{}))
}

// noPartial drops the partial File returned with an error.
func noPartial(f *File, err error) (*File, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ParseWith is Parse with further keys allowed (see Options). When the
// YAML is well formed but has problems, it returns the error together with
// the parts that did decode (invalid jobs left out), so a caller can check
// the rest and report every problem at once.
func ParseWith(name string, data []byte, o Options) (*File, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return newFile(name), nil // empty file
		}
		return nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(name, data, err)
		}
		return nil, fmt.Errorf("%s:%d: only one YAML document is allowed", name, extra.Line)
	}
	d := &decoder{name: name, f: newFile(name), opts: o}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return d.f, nil
		}
		root = root.Content[0]
	}
	d.file(root)
	if len(d.errs) > 0 {
		if n := len(d.errs); n > maxErrors {
			d.errs = append(d.errs[:maxErrors], fmt.Errorf("%s: and %d more problems", name, n-maxErrors))
		}
		return d.f, errors.Join(d.errs...)
	}
	return d.f, nil
}

// syntaxError turns yaml's "yaml: line N: msg" into "name:N: msg". yaml
// reports some errors at the line where the enclosing block began (line 1
// for a bad line deep inside jobs:); the line given is instead the first
// line whose addition makes the file fail to parse, found by bisection.
func syntaxError(name string, data []byte, err error) error {
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(msg, "yaml: "))
	}
	line := m[1]
	if l := firstBadLine(data); l > 0 {
		line = strconv.Itoa(l)
	}
	return fmt.Errorf("%s:%s: %s", name, line, m[2])
}

// firstBadLine returns the smallest n such that the first n lines of data
// do not parse as YAML, or 0 if it cannot tell.
func firstBadLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := func(n int) bool {
		var v yaml.Node
		dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:n], nil)))
		for {
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				return false
			}
			if err != nil {
				return true
			}
		}
	}
	if !bad(len(lines)) {
		return 0
	}
	lo, hi := 0, len(lines) // bad(hi) holds; find the smallest such hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if bad(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// decoder walks the node tree, collecting every problem with its line.
type decoder struct {
	name string
	opts Options
	f    *File
	errs []error
}

func (d *decoder) failf(n *yaml.Node, path, format string, args ...any) {
	// A value that did not decode counts as absent (Has, Where): checks
	// made later on the decoded values use the default instead of the zero
	// left behind, so "interval: 5" is reported once, as not a duration,
	// and not again as a 0s interval.
	delete(d.f.lines, path)
	if path == "" {
		d.errs = append(d.errs, fmt.Errorf("%s:%d: %s", d.name, n.Line, fmt.Sprintf(format, args...)))
		return
	}
	d.errs = append(d.errs, fmt.Errorf("%s:%d: %s: %s", d.name, n.Line, path, fmt.Sprintf(format, args...)))
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	default:
		return "an alias"
	}
}

// mapping calls fn for each key of n in order, after checking that n is a
// mapping, that keys are strings, unique and known.
func (d *decoder) mapping(n *yaml.Node, path string, known []string, fn func(key string, v *yaml.Node)) bool {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping of %s, found %s", strings.Join(known, ", "), kindName(n))
		return false
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			d.failf(k, path, "keys must be plain names (merge keys and complex keys are not supported)")
			continue
		}
		kp := join(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.failf(k, kp, "duplicate key (first at line %d)", line)
			continue
		}
		seen[k.Value] = k.Line
		if !contains(known, k.Value) {
			d.failf(k, kp, "unknown key%s (known: %s)", suggest(k.Value, known), strings.Join(known, ", "))
			continue
		}
		d.f.lines[kp] = v.Line
		fn(k.Value, v)
	}
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns ` (did you mean "x"?)` for a known key within edit
// distance 2, else "".
func suggest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := editDistance(key, k); dist < bestD {
			best, bestD = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + strconv.Quote(best) + "?)"
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
