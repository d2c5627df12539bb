package cli

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/jobs"
)

// reload re-reads the config file (SIGHUP, systemctl reload) and applies
// what can change live: jobs and hooks. Leadership is untouched. Election
// settings that changed are reported and keep their running values until
// a restart. A file with errors is refused as a whole, its errors logged,
// and the running configuration stays.
func (d *daemon) reload() {
	d.notify.reloading()
	defer d.notify.reloaded()
	d.mu.Lock()
	defer d.mu.Unlock()
	log := d.log.With("config", d.rc.s.ConfigPath)
	log.Info("reloading the config file")
	rf, err := d.rf.fresh()
	var rc *runConfig
	if err == nil {
		rc, err = rf.load()
	}
	if err == nil {
		// Jobs are validated with the runner's own rules before anything
		// changes, so a refused file changes nothing.
		err = errors.Join(jobs.ValidateAll(rc.file.Jobs), jobs.ValidateServices(rc.file.Services, rc.file.Jobs))
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			log.Error("reload refused; the running configuration stays", "problem", line)
		}
		return
	}
	for _, w := range rc.warnings {
		log.Warn(w)
	}
	if changed := electionChanges(d.rc, rc); len(changed) > 0 {
		log.Warn("election settings changed in the file; they apply at the next restart",
			"settings", strings.Join(changed, ", "))
	}
	res, err := d.runner.Update(rc.file.Jobs)
	if err != nil {
		log.Error("reload refused; the running configuration stays", "problem", err.Error())
		return
	}
	sres, err := d.runner.UpdateServices(rc.file.Services)
	if err != nil { // validated above: cannot happen
		log.Error("reload of services refused; they stay as they were", "problem", err.Error())
	}
	hookCfg := rc.file.Hooks
	d.hooks.SetConfig(hookCfg)
	if rc.s.LogLevel != d.rc.s.LogLevel {
		if lvl, err := parseLevel(rc.s.LogLevel); err == nil { // load checked it
			d.level.Set(lvl)
			log.Info("log level changed", "from", d.rc.s.LogLevel, "to", rc.s.LogLevel)
		}
	}
	if rc.s.LogFormat != d.rc.s.LogFormat {
		log.Warn("log.format changed in the file; it applies at the next restart", "running", d.rc.s.LogFormat)
	}
	// The election part of the running configuration stays as it was.
	kept := *d.rc
	kept.file = rc.file
	kept.s.LogLevel = rc.s.LogLevel
	d.rc = &kept
	log.Info("config reloaded", "jobs_added", res.Added, "jobs_removed", res.Removed,
		"jobs_changed", res.Changed, "jobs", len(rc.file.Jobs), "services_added", sres.Added,
		"services_removed", sres.Removed, "services_changed", sres.Changed, "services", len(rc.file.Services))
}

// electionChanges names the election settings that differ between the
// running configuration and a reloaded one.
func electionChanges(old, cur *runConfig) []string {
	var out []string
	if old.s.Mode != cur.s.Mode {
		out = append(out, "mode")
	}
	if old.s.NodeID != cur.s.NodeID {
		out = append(out, "node_id")
	}
	if old.s.HTTP != cur.s.HTTP {
		out = append(out, "http")
	}
	if !slices.Equal(old.s.HTTPHosts, cur.s.HTTPHosts) {
		out = append(out, "http_hosts")
	}
	if old.s.HTTPOutputTails != cur.s.HTTPOutputTails {
		out = append(out, "http_output_tails")
	}
	if old.s.Mode == cur.s.Mode {
		out = append(out, fieldChanges(old.ms, cur.ms)...)
	}
	for k, n := range cur.file.ElectionExtra {
		if !sameYAML(old.file.ElectionExtra[k], n) {
			out = append(out, k)
		}
	}
	for k := range old.file.ElectionExtra {
		if _, ok := cur.file.ElectionExtra[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// fieldChanges names the exported fields of two structs (or pointers to
// them) of one type that differ.
func fieldChanges(a, b any) []string {
	va, vb := reflect.Indirect(reflect.ValueOf(a)), reflect.Indirect(reflect.ValueOf(b))
	if va.Kind() != reflect.Struct || va.Type() != vb.Type() {
		return nil
	}
	var out []string
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if f.IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, strings.ToLower(f.Name))
		}
	}
	return out
}

func sameYAML(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	ya, errA := yaml.Marshal(a)
	yb, errB := yaml.Marshal(b)
	return errors.Join(errA, errB) == nil && string(ya) == string(yb)
}
