package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/election"
)

// WriteTable prints doc for a person: this node's role and leader first,
// then the jobs and extra views. The jobs view is decoded into its type,
// []jobs.JobStatus, and becomes one line per job. Other views are shown generically: a list of objects (or
// an object of objects keyed by name) becomes a table whose columns are
// the objects' keys in order, nested keys joined with dots; the scalars of
// an object are listed under DETAILS.
func WriteTable(w io.Writer, doc StatusDoc) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("NODE", orDash(doc.Node))
	role := doc.Role.String()
	if !doc.Since.IsZero() {
		role += " since " + doc.Since.Format(time.RFC3339)
		if !doc.Time.IsZero() && !doc.Time.Before(doc.Since) {
			role += " (" + doc.Time.Sub(doc.Since).Round(time.Second).String() + ")"
		}
	}
	if doc.Role == election.Leader && doc.MayAct != nil && !*doc.MayAct {
		role += ", may not act now"
	}
	row("ROLE", role)
	row("TERM", fmt.Sprint(doc.Term))
	row("LEADER", leaderText(doc))
	if doc.Ready {
		row("READY", "yes")
	} else {
		row("READY", "no")
	}
	if doc.Version != "" {
		row("VERSION", doc.Version)
	}
	for _, warn := range doc.Warnings {
		row("WARNING", warn)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows, ok := decodeJobs(doc.Jobs); ok {
		if err := writeJobTable(w, rows, doc.Time); err != nil {
			return err
		}
	} else if err := writeSection(w, "JOBS", doc.Jobs); err != nil {
		return err
	}
	if err := writeServices(w, doc.Services, doc.Time); err != nil {
		return err
	}
	return writeSection(w, "", doc.Extra)
}

func leaderText(doc StatusDoc) string {
	l := doc.Leader
	if !l.Known() {
		return "none known"
	}
	s := l.ID
	if doc.Role == election.Leader && l.ID == doc.Node {
		s += " (this node)"
	}
	if l.Addr != "" {
		s += " at " + l.Addr
	}
	return s + ", term " + fmt.Sprint(l.Term)
}

// writeSection prints one view under title. An object whose values are
// tables prints each as its own titled section.
func writeSection(w io.Writer, title string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := decodeOrdered(raw)
	if err != nil {
		return fmt.Errorf("httpapi: %s: %w", strings.ToLower(title), err)
	}
	if obj, ok := v.(object); ok && !isTable(v) {
		// A bag of named parts: scalars as key/value lines, tables as
		// sections of their own.
		var scalars object
		var parts []field
		for _, f := range obj {
			if isTable(f.val) {
				parts = append(parts, f)
			} else {
				scalars = append(scalars, f)
			}
		}
		if len(scalars) > 0 {
			fmt.Fprintf(w, "\n%s\n", orDefault(title, "DETAILS"))
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			for _, f := range flatten("", scalars, nil) {
				fmt.Fprintf(tw, "%s\t%s\n", strings.ToUpper(f.key), cell(f.val))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, p := range parts {
			name := strings.ToUpper(p.key)
			if title != "" {
				name = title + " " + name
			}
			if err := writeTable(w, name, p.val); err != nil {
				return err
			}
		}
		return nil
	}
	if isTable(v) {
		return writeTable(w, orDefault(title, "DETAILS"), v)
	}
	if arr, ok := v.([]any); ok && len(arr) == 0 {
		_, err = fmt.Fprintf(w, "\n%s\n(none)\n", orDefault(title, "DETAILS"))
		return err
	}
	_, err = fmt.Fprintf(w, "\n%s\n%s\n", orDefault(title, "DETAILS"), cell(v))
	return err
}

// isTable reports whether v is a non-empty list of objects, or an object
// whose values are all objects (rows keyed by name).
func isTable(v any) bool {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if _, ok := e.(object); !ok {
				return false
			}
		}
		return len(t) > 0
	case object:
		for _, f := range t {
			if _, ok := f.val.(object); !ok {
				return false
			}
		}
		return len(t) > 0
	}
	return false
}

// writeTable prints a table value (see isTable) under title.
func writeTable(w io.Writer, title string, v any) error {
	var rows []object
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			rows = append(rows, flatten("", e.(object), nil))
		}
	case object:
		for _, f := range t {
			rows = append(rows, flatten("", f.val.(object), object{{"name", f.key}}))
		}
	}
	var cols []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, f := range r {
			if !seen[f.key] {
				seen[f.key] = true
				cols = append(cols, f.key)
			}
		}
	}
	// A key that is null in one row and an object in another ("last_run"
	// before the first run) is shown through the object's columns only.
	kept := cols[:0]
	for _, c := range cols {
		nested := false
		for _, o := range cols {
			nested = nested || strings.HasPrefix(o, c+".")
		}
		if !nested {
			kept = append(kept, c)
		}
	}
	cols = kept
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
	for _, r := range rows {
		vals := make(map[string]any, len(r))
		for _, f := range r {
			vals[f.key] = f.val
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = cell(vals[c])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// flatten appends obj's scalar leaves to out, nested keys joined by dots.
func flatten(prefix string, obj object, out object) object {
	for _, f := range obj {
		key := f.key
		if prefix != "" {
			key = prefix + "." + key
		}
		if sub, ok := f.val.(object); ok && len(sub) > 0 {
			out = flatten(key, sub, out)
			continue
		}
		out = append(out, field{key, f.val})
	}
	return out
}

// cell renders one value on one line.
func cell(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		if t == "" {
			return "-"
		}
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			if ts.IsZero() {
				return "-"
			}
			return ts.Format(time.RFC3339)
		}
		return oneLine(t)
	case json.Number:
		return t.String()
	case bool:
		if t {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = cell(e)
		}
		return strings.Join(parts, ",")
	case object:
		if len(t) == 0 {
			return "-"
		}
		parts := make([]string, len(t))
		for i, f := range t {
			parts[i] = f.key + "=" + cell(f.val)
		}
		return strings.Join(parts, " ")
	}
	return oneLine(fmt.Sprint(v))
}

func oneLine(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func orDash(s string) string { return orDefault(s, "-") }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
