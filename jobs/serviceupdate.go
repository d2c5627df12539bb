package jobs

import (
	"fmt"
	"reflect"
)

// UpdateServices replaces the services with specs while the Runner keeps
// going: a config reload. Services are matched by name. While this node
// leads, an added service is started as at the start of the leadership
// (after the previous copy, if the ledger names one); a changed one's copy
// is stopped and the new definition started once it is gone; a removed
// one's copy is stopped. Invalid specs are refused with an error and
// change nothing.
func (r *Runner) UpdateServices(specs []ServiceSpec) (UpdateResult, error) {
	r.mu.Lock()
	defer r.unlock()
	jobSpecs := make([]Spec, len(r.jobs))
	for i, j := range r.jobs {
		jobSpecs[i] = j.spec
	}
	if err := ValidateServices(specs, jobSpecs); err != nil {
		return UpdateResult{}, fmt.Errorf("jobs: %w", err)
	}
	leading := r.term != 0 && !r.closed && !r.draining && r.leaderCtx != nil && r.leaderCtx.Err() == nil
	old := make(map[string]*service, len(r.services))
	for _, sv := range r.services {
		old[sv.spec.Name] = sv
	}
	var res UpdateResult
	list := make([]*service, 0, len(specs))
	for _, spec := range specs {
		sv, kept := old[spec.Name]
		switch {
		case !kept:
			res.Added = append(res.Added, spec.Name)
			// One removed before, its copy maybe still stopping: the new
			// supervisor waits for it (startSupervisorLocked).
			if sv = r.removed[spec.Name]; sv != nil {
				delete(r.removed, spec.Name)
				sv.spec = spec
			} else {
				sv = newService(spec)
			}
		case reflect.DeepEqual(sv.spec, spec):
			delete(old, spec.Name)
			list = append(list, sv)
			continue
		default:
			res.Changed = append(res.Changed, spec.Name)
			delete(old, spec.Name)
			sv.spec = spec
		}
		list = append(list, sv)
		if leading {
			r.startSupervisorLocked(r.leaderCtx, r.term, sv, r.leadStart)
		}
	}
	for _, sv := range r.services {
		if _, removed := old[sv.spec.Name]; removed {
			res.Removed = append(res.Removed, sv.spec.Name)
			if sv.stop != nil {
				sv.stop()
			}
			r.removed[sv.spec.Name] = sv
		}
	}
	r.services = list
	return res, nil
}
