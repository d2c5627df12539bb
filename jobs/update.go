package jobs

import (
	"context"
	"fmt"
	"reflect"
	"time"
)

// UpdateResult names the jobs an Update added, removed and changed.
type UpdateResult struct {
	Added, Removed, Changed []string
}

// Empty reports whether the update changed nothing.
func (u UpdateResult) Empty() bool {
	return len(u.Added)+len(u.Removed)+len(u.Changed) == 0
}

// Update replaces the jobs with specs while the Runner keeps going: a
// config reload. Jobs are matched by name. While this node leads:
//   - an added job is scheduled at once, as at the start of a leadership
//     (its ledger entry, if any leader ran it before, is honoured); within
//     the gathering window its takeover decision waits for the window's
//     end, as the other jobs' do;
//   - a changed job's schedule restarts from now with the new definition;
//     its runs in progress go on as they started; a takeover decision still
//     pending (within the gathering window) is made at the window's end,
//     with the new definition;
//   - a removed job is no longer scheduled, and its runs in progress end
//     as if leadership were lost (on_leader_loss: cancel stops them,
//     finish lets them complete).
//
// Counters, the last run and the ledger entry of a kept job carry over.
// Invalid specs are refused with an error and change nothing.
func (r *Runner) Update(specs []Spec) (UpdateResult, error) {
	if err := ValidateAll(specs); err != nil {
		return UpdateResult{}, fmt.Errorf("jobs: %w", err)
	}
	fresh, err := newJobs(specs)
	if err != nil {
		return UpdateResult{}, err
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	leading := r.term != 0 && !r.closed && r.leaderCtx != nil && r.leaderCtx.Err() == nil
	old := make(map[string]*job, len(r.jobs))
	for _, j := range r.jobs {
		old[j.spec.Name] = j
	}
	var res UpdateResult
	list := make([]*job, 0, len(fresh))
	var added []*job
	for _, nj := range fresh {
		oj, kept := old[nj.spec.Name]
		if !kept {
			res.Added = append(res.Added, nj.spec.Name)
			added = append(added, nj)
			list = append(list, nj)
			continue
		}
		delete(old, nj.spec.Name)
		list = append(list, oj)
		if reflect.DeepEqual(oj.spec, nj.spec) {
			continue
		}
		res.Changed = append(res.Changed, nj.spec.Name)
		oj.spec, oj.sched = nj.spec, nj.sched
		if leading {
			r.startLoopLocked(r.term, oj, r.loopPlanLocked(oj, now))
		}
	}
	for _, oj := range r.jobs {
		if _, removed := old[oj.spec.Name]; !removed {
			continue
		}
		res.Removed = append(res.Removed, oj.spec.Name)
		delete(r.byID, oj.id)
		if oj.stopLoop != nil {
			oj.stopLoop()
		}
		if oj.stopRuns != nil {
			oj.stopRuns() // runs follow on_leader_loss: finish runs use stopCtx
		}
	}
	for _, nj := range added {
		r.byID[nj.id] = nj
		if leading {
			nj.runCtx, nj.stopRuns = context.WithCancel(r.leaderCtx)
			r.startLoopLocked(r.term, nj, r.loopPlanLocked(nj, now))
		}
	}
	r.jobs = list
	if leading && !res.Empty() {
		r.ledgerChanged()
	}
	return res, nil
}
