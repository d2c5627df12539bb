package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Each scalar decoder reports a problem with the node's line and returns
// ok=false. A null value (key with nothing after it) counts as unset and is
// ok with the zero value.

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if isNull(n) {
		return "", true
	}
	if n.Kind != yaml.ScalarNode {
		d.failf(n, path, "expected a string, found %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) strList(n *yaml.Node, path string) ([]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		d.failf(n, path, "expected a list of strings, found %s", kindName(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		c = resolve(c)
		if c.Kind != yaml.ScalarNode || isNull(c) {
			d.failf(c, fmt.Sprintf("%s[%d]", path, i), "expected a string, found %s", kindName(c))
			ok = false
			continue
		}
		out = append(out, c.Value)
	}
	return out, ok
}

func (d *decoder) strMap(n *yaml.Node, path string) (map[string]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "expected a mapping of NAME: value, found %s", kindName(n))
		return nil, false
	}
	out := map[string]string{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || isNull(k) {
			d.failf(k, path, "expected a variable name, found %s", kindName(k))
			ok = false
			continue
		}
		kp := path + "." + k.Value
		d.f.lines[kp] = v.Line
		if _, dup := out[k.Value]; dup {
			d.failf(k, kp, "duplicate key")
			ok = false
			continue
		}
		if v.Kind != yaml.ScalarNode {
			d.failf(v, kp, "expected a string, found %s", kindName(v))
			ok = false
			continue
		}
		val := v.Value
		if isNull(v) {
			val = ""
		}
		out[k.Value] = val
	}
	return out, ok
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	if isNull(n) {
		return 0, true
	}
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		d.failf(n, path, "expected an integer, found %s", kindName(n))
		return 0, false
	}
	return i, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	if isNull(n) {
		return false, true
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		d.failf(n, path, "expected true or false, found %s", kindName(n))
		return false, false
	}
	return b, true
}

// onOff accepts a string (on, off, auto, checked by the CLI) or a YAML
// boolean, read as on or off.
func (d *decoder) onOff(n *yaml.Node, path string) (string, bool) {
	if isNull(n) {
		return "", true
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if n.Decode(&b) == nil {
			return map[bool]string{true: "on", false: "off"}[b], true
		}
	}
	return d.str(n, path)
}

// duration accepts Go duration strings ("30s", "1m30s") and a bare 0.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	if isNull(n) {
		return 0, true
	}
	if n.Kind != yaml.ScalarNode {
		d.failf(n, path, "expected a duration such as 30s or 5m, found %s", kindName(n))
		return 0, false
	}
	if n.Value == "0" {
		return 0, true
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.failf(n, path, "%q: not a duration (write e.g. 30s, 5m, 1h30m)", n.Value)
		return 0, false
	}
	if v < 0 {
		d.failf(n, path, "%q: must not be negative", n.Value)
		return 0, false
	}
	return v, true
}

// text decodes a scalar into an encoding.TextUnmarshaler (job policies).
func (d *decoder) text(n *yaml.Node, path string, into interface{ UnmarshalText([]byte) error }) bool {
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.ScalarNode {
		d.failf(n, path, "expected a string, found %s", kindName(n))
		return false
	}
	if err := into.UnmarshalText([]byte(n.Value)); err != nil {
		d.failf(n, path, "%v", err)
		return false
	}
	return true
}
