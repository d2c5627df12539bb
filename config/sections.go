package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/jobs"
)

var (
	topKeys      = []string{"election", "jobs", "services", "hooks", "log"}
	logKeys      = []string{"level", "format"}
	electionKeys = []string{"mode", "node_id", "leader", "env_var", "cluster", "bind", "port",
		"transport", "group", "peers", "priority", "interval", "misses", "preempt", "secret_file", "http", "http_hosts", "http_output_tails", "cluster_size", "quorum", "role", "state_dir"}
	jobKeys = []string{"name", "schedule", "command", "shell", "http", "dir", "env", "timeout",
		"overlap", "retries", "retry_delay", "on_leader_loss", "misfire", "misfire_grace",
		"rerun_interrupted", "kill_grace", "on_failure"}
	httpKeys    = []string{"method", "url", "headers", "body", "accept", "ca_file"}
	serviceKeys = []string{"name", "command", "shell", "dir", "env", "stop_grace", "restart_delay", "restart_max_delay"}
	hookKeys    = []string{"on_leader", "on_follower", "on_stop", "on_job_failure", "on_service_exit", "timeout"}
)

func (d *decoder) file(root *yaml.Node) {
	if isNull(resolve(root)) {
		return
	}
	d.mapping(root, "", topKeys, func(key string, v *yaml.Node) {
		switch key {
		case "election":
			d.election(v)
		case "jobs":
			d.jobs(v)
		case "services":
			d.services(v)
		case "hooks":
			d.hooks(v)
		case "log":
			d.log(v)
		}
	})
	for i, s := range d.f.Services {
		if job, clash := jobs.ServiceClashesWith(s.Name, d.f.Jobs); clash {
			p := fmt.Sprintf("services[%d].name", i)
			d.failf(d.at(root, p), p, "%q has the ledger id of job %s; rename one", s.Name, job)
		}
	}
}

func (d *decoder) election(n *yaml.Node) {
	if isNull(n) {
		return
	}
	e := &d.f.Election
	// Modes name their keys again (the built-in ones are also known
	// here): list each once, so "known: ..." in an error does too.
	known := append([]string{}, electionKeys...)
	for _, k := range d.opts.ElectionKeys {
		if !contains(known, k) {
			known = append(known, k)
		}
	}
	d.mapping(n, "election", known, func(key string, v *yaml.Node) {
		p := "election." + key
		switch key {
		case "mode":
			e.Mode, _ = d.str(v, p)
		case "node_id":
			e.NodeID, _ = d.str(v, p)
		case "leader":
			e.Leader, _ = d.str(v, p)
		case "env_var":
			e.EnvVar, _ = d.str(v, p)
		case "cluster":
			e.Cluster, _ = d.str(v, p)
		case "bind":
			e.Bind, _ = d.str(v, p)
		case "transport":
			e.Transport, _ = d.str(v, p)
		case "group":
			e.Group, _ = d.str(v, p)
		case "port":
			if i, ok := d.integer(v, p); ok {
				if i < 0 || i > 65535 {
					d.failf(v, p, "%d is not a port (1-65535)", i)
				}
				e.Port = i
			}
		case "peers":
			e.Peers, _ = d.strList(v, p)
		case "priority":
			if i, ok := d.integer(v, p); ok && !isNull(v) {
				e.Priority = &i
			}
		case "interval":
			e.Interval, _ = d.duration(v, p)
		case "misses":
			e.Misses, _ = d.integer(v, p)
		case "cluster_size":
			e.ClusterSize, _ = d.integer(v, p)
		case "quorum":
			e.Quorum, _ = d.onOff(v, p)
		case "role":
			e.Role, _ = d.str(v, p)
		case "preempt":
			if b, ok := d.boolean(v, p); ok && !isNull(v) {
				e.Preempt = &b
			}
		case "secret_file":
			e.SecretFile, _ = d.str(v, p)
		case "http":
			if s, ok := d.str(v, p); ok {
				e.HTTP = &s
			}
		case "http_hosts":
			e.HTTPHosts, _ = d.strList(v, p)
		case "http_output_tails":
			if b, ok := d.boolean(v, p); ok && !isNull(v) {
				e.HTTPOutputTails = &b
			}
		case "state_dir":
			if s, ok := d.str(v, p); ok {
				e.StateDir = &s
			}
		default:
			d.f.ElectionExtra[key] = v
		}
	})
}

func (d *decoder) jobs(n *yaml.Node) {
	d.f.Jobs = namedList(d, n, "jobs", "jobs", d.job, func(s jobs.Spec) string { return s.Name })
}

func (d *decoder) services(n *yaml.Node) {
	d.f.Services = namedList(d, n, "services", "services", d.service, func(s jobs.ServiceSpec) string { return s.Name })
}

// namedList decodes the list under key, each item with decode, and refuses
// a name two items share (the later one's line, naming the first), also
// when either has problems of its own. Items with problems are left out.
func namedList[T any](d *decoder, n *yaml.Node, key, what string, decode func(*yaml.Node, string) (T, bool), name func(T) string) []T {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.failf(n, key, "expected a list of %s, found %s", what, kindName(n))
		return nil
	}
	var out []T
	names := map[string]string{} // name -> "key[i] (line n)"
	for i, item := range n.Content {
		item = resolve(item)
		path := fmt.Sprintf("%s[%d]", key, i)
		v, ok := decode(item, path)
		// An item with problems of its own still claims its name: every
		// problem is reported at once, a duplicate name among them.
		if prev, dup := names[name(v)]; dup && name(v) != "" {
			d.failf(d.at(item, path+".name"), path+".name", "%q already used by %s", name(v), prev)
		} else if name(v) != "" {
			names[name(v)] = fmt.Sprintf("%s (line %d)", path, d.at(item, path+".name").Line)
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// processKey decodes one of the keys that say what process a job or a
// service runs: command, shell, dir, env. ok is false on a problem.
func (d *decoder) processKey(key string, v *yaml.Node, p string, command *[]string, shell, dir *string, env *map[string]string) (ok bool) {
	switch key {
	case "command":
		*command, ok = d.strList(v, p)
		if ok && v.Kind == yaml.SequenceNode && len(*command) == 0 {
			d.failf(v, p, "empty list: give the program and its arguments")
			return false
		}
	case "shell":
		*shell, ok = d.str(v, p)
	case "dir":
		*dir, ok = d.str(v, p)
	case "env":
		*env, ok = d.strMap(v, p)
	}
	return ok
}

// service decodes one service; ok is false if it had any problem.
func (d *decoder) service(n *yaml.Node, path string) (jobs.ServiceSpec, bool) {
	var s jobs.ServiceSpec
	bad := map[string]bool{}
	isMap := d.mapping(n, path, serviceKeys, func(key string, v *yaml.Node) {
		p := path + "." + key
		ok := true
		switch key {
		case "name":
			s.Name, ok = d.str(v, p)
		case "command", "shell", "dir", "env":
			ok = d.processKey(key, v, p, &s.Command, &s.Shell, &s.Dir, &s.Env)
		case "stop_grace":
			s.StopGrace, ok = d.duration(v, p)
		case "restart_delay":
			s.RestartDelay, ok = d.duration(v, p)
		case "restart_max_delay":
			s.RestartMaxDelay, ok = d.duration(v, p)
		}
		if !ok {
			bad[key] = true
		}
	})
	if !isMap {
		return s, false
	}
	return s, d.fieldErrors(n, path, s.Validate(), bad) && len(bad) == 0
}

// fieldErrors reports err's *jobs.FieldErrors at their key's line (or the
// nearest enclosing key's), except those of keys that failed to decode
// (bad: already reported). It reports whether err was nil.
func (d *decoder) fieldErrors(n *yaml.Node, path string, err error, bad map[string]bool) bool {
	if err == nil {
		return true
	}
	for _, e := range flatten(err) {
		var fe *jobs.FieldError
		if !errors.As(e, &fe) {
			d.failf(n, path, "%v", e)
			continue
		}
		if bad[fe.Field] || bad[strings.SplitN(fe.Field, ".", 2)[0]] || fe.Field == "command" && (bad["shell"] || bad["http"]) ||
			(fe.Field == "shell" && bad["command"]) {
			continue // already reported as a decoding problem
		}
		d.failf(d.at(n, path+"."+fe.Field), path+"."+fe.Field, "%v", fe.Err)
	}
	return false
}

// at returns a node carrying the line of key's value; if key is absent,
// the line of its nearest enclosing key that is there (jobs[0].http for a
// missing jobs[0].http.url), else parent's line.
func (d *decoder) at(parent *yaml.Node, key string) *yaml.Node {
	for k := key; ; {
		if l, ok := d.f.lines[k]; ok {
			return &yaml.Node{Line: l}
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 || !strings.Contains(k[:i], ".") {
			return parent // not past the job itself: jobs[0]
		}
		k = k[:i]
	}
}

// job decodes one job; ok is false if it had any problem.
func (d *decoder) job(n *yaml.Node, path string) (jobs.Spec, bool) {
	var s jobs.Spec
	var onFailure hooks.Command
	bad := map[string]bool{}
	isMap := d.mapping(n, path, jobKeys, func(key string, v *yaml.Node) {
		p := path + "." + key
		ok := true
		switch key {
		case "name":
			s.Name, ok = d.str(v, p)
		case "schedule":
			s.Schedule, ok = d.str(v, p)
		case "command", "shell", "dir", "env":
			ok = d.processKey(key, v, p, &s.Command, &s.Shell, &s.Dir, &s.Env)
		case "http":
			s.HTTP, ok = d.httpRequest(v, p)
		case "timeout":
			s.Timeout, ok = d.duration(v, p)
		case "overlap":
			ok = d.text(v, p, &s.Overlap)
		case "retries":
			s.Retries, ok = d.integer(v, p)
		case "retry_delay":
			s.RetryDelay, ok = d.duration(v, p)
		case "on_leader_loss":
			ok = d.text(v, p, &s.OnLeaderLoss)
		case "misfire":
			ok = d.text(v, p, &s.Misfire)
		case "misfire_grace":
			s.MisfireGrace, ok = d.duration(v, p)
		case "rerun_interrupted":
			s.RerunInterrupted, ok = d.boolean(v, p)
		case "kill_grace":
			s.KillGrace, ok = d.duration(v, p)
		case "on_failure":
			onFailure = d.command(v, p)
		}
		if !ok {
			bad[key] = true
		}
	})
	if !isMap {
		return s, false
	}
	if !onFailure.IsZero() && s.Name != "" {
		if d.f.Hooks.JobOnFailure == nil {
			d.f.Hooks.JobOnFailure = map[string]hooks.Command{}
		}
		d.f.Hooks.JobOnFailure[s.Name] = onFailure
	}
	// Relationships and schedules: Validate names the field; point at its
	// line, or the job's own line when the field is missing.
	return s, d.fieldErrors(n, path, s.Validate(), bad) && len(bad) == 0
}

// httpRequest decodes an http: job's request; ok is false if any key had
// a problem.
func (d *decoder) httpRequest(n *yaml.Node, path string) (*jobs.HTTPRequest, bool) {
	var h jobs.HTTPRequest
	ok := true
	isMap := d.mapping(n, path, httpKeys, func(key string, v *yaml.Node) {
		p := path + "." + key
		good := true
		switch key {
		case "method":
			h.Method, good = d.str(v, p)
		case "url":
			h.URL, good = d.str(v, p)
		case "headers":
			h.Headers, good = d.strMap(v, p)
		case "body":
			h.Body, good = d.str(v, p)
		case "accept":
			h.Accept, good = d.strList(v, p)
		case "ca_file":
			h.CAFile, good = d.str(v, p)
		}
		ok = ok && good
	})
	return &h, isMap && ok
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func (d *decoder) hooks(n *yaml.Node) {
	if isNull(n) {
		return
	}
	h := &d.f.Hooks
	d.mapping(n, "hooks", hookKeys, func(key string, v *yaml.Node) {
		p := "hooks." + key
		switch key {
		case "on_leader":
			h.OnLeader = d.command(v, p)
		case "on_follower":
			h.OnFollower = d.command(v, p)
		case "on_stop":
			h.OnStop = d.command(v, p)
		case "on_job_failure":
			h.OnJobFailure = d.command(v, p)
		case "on_service_exit":
			h.OnServiceExit = d.command(v, p)
		case "timeout":
			h.Timeout, _ = d.duration(v, p)
		}
	})
}

// command accepts a shell string or an argv list.
func (d *decoder) command(n *yaml.Node, path string) hooks.Command {
	switch {
	case isNull(n):
		return hooks.Command{}
	case n.Kind == yaml.ScalarNode:
		return hooks.Command{Shell: n.Value}
	case n.Kind == yaml.SequenceNode:
		argv, ok := d.strList(n, path)
		if ok && (len(argv) == 0 || argv[0] == "") {
			d.failf(n, path, "empty command")
		}
		return hooks.Command{Argv: argv}
	default:
		d.failf(n, path, "expected a shell string or an argv list, found %s", kindName(n))
		return hooks.Command{}
	}
}

func (d *decoder) log(n *yaml.Node) {
	if isNull(n) {
		return
	}
	d.mapping(n, "log", logKeys, func(key string, v *yaml.Node) {
		switch key {
		case "level":
			d.f.Log.Level, _ = d.str(v, "log.level")
		case "format":
			d.f.Log.Format, _ = d.str(v, "log.format")
		}
	})
}
