package jobs

import "time"

// NextCount is how many upcoming instants Jobs lists per job.
const NextCount = 3

// JobView is one job as /jobs and `lanleader jobs` show it: its schedule,
// its next instants and its recent runs.
type JobView struct {
	// Name is the job's name.
	Name string `json:"name"`
	// Schedule is the schedule as written.
	Schedule string `json:"schedule"`
	// Overlap is the job's overlap policy (skip or allow), which applies to
	// manual runs too.
	Overlap Overlap `json:"overlap"`
	// Next are the next NextCount scheduled instants (UTC).
	Next []time.Time `json:"next"`
	// Running is the number of runs in progress on this node.
	Running int `json:"running"`
	// Runs are the most recent finished runs, newest first: this node's
	// and those heard of in leaders' ledgers (heard: true).
	Runs []RunRecord `json:"runs"`
}

// Jobs returns every job's view, in config order, with at most runs recent
// runs each (all kept if runs <= 0). Safe to call from any goroutine.
func (r *Runner) Jobs(runs int) []JobView {
	now := time.Now()
	r.mu.Lock()
	out := make([]JobView, 0, len(r.jobs))
	for _, j := range r.jobs {
		v := JobView{Name: j.spec.Name, Schedule: j.spec.Schedule, Overlap: j.spec.Overlap, Running: j.active}
		t := j.next // while leading, the instant the loop waits for
		if t.IsZero() {
			t = j.sched.Next(now)
		}
		for ; !t.IsZero() && len(v.Next) < NextCount; t = j.sched.Next(t) {
			v.Next = append(v.Next, t.UTC())
		}
		out = append(out, v)
	}
	r.unlock()
	for i := range out {
		out[i].Runs = r.history.Runs(out[i].Name, runs)
		if out[i].Runs == nil {
			out[i].Runs = []RunRecord{}
		}
	}
	return out
}
