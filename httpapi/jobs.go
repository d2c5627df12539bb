package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// MaxRuns caps the runs= parameter of /jobs.
const MaxRuns = 1000

// JobsDoc is the JSON document /jobs serves, and what FetchJobs returns.
type JobsDoc struct {
	// Node is the node that answered.
	Node string `json:"node"`
	// Time is its clock when it answered.
	Time time.Time `json:"time"`
	// Jobs are every job's schedule, next instants and recent runs.
	Jobs []jobs.JobView `json:"jobs"`
	// Services are the leader-only services' state on this node; absent
	// when none are configured.
	Services []jobs.ServiceStatus `json:"services,omitempty"`
}

// jobsDoc builds /jobs with at most runs recent runs per job.
func (s *Server) jobsDoc(runs int, exp exposure) JobsDoc {
	doc := JobsDoc{Node: s.cfg.Elector.Status().Node, Time: s.now(), Jobs: []jobs.JobView{}}
	if s.cfg.JobViews != nil {
		doc.Jobs = exp.views(s.cfg.JobViews(runs))
	}
	doc.Services = s.services()
	return doc
}

// jobsHandler serves /jobs[?runs=N] (default jobs.DefaultHistorySize).
func (s *Server) jobsHandler(w http.ResponseWriter, r *http.Request, exp exposure) {
	runs := jobs.DefaultHistorySize
	if v := r.URL.Query().Get("runs"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxRuns {
			writeText(w, http.StatusBadRequest, fmt.Sprintf("runs=%q: want a number from 1 to %d", v, MaxRuns))
			return
		}
		runs = n
	}
	b, err := json.MarshalIndent(s.jobsDoc(runs, exp), "", "  ")
	if err != nil {
		s.log.Error("httpapi: encode jobs", "err", err)
		writeText(w, http.StatusInternalServerError, "encode jobs: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// FetchJobs reads /jobs?runs=N from the endpoint at addr (as FetchStatus).
func FetchJobs(ctx context.Context, addr string, runs int) (JobsDoc, error) {
	var doc JobsDoc
	url := strings.TrimSuffix(statusURL(addr), "/status") + "/jobs?runs=" + strconv.Itoa(runs)
	err := getJSON(ctx, url, "jobs", &doc)
	return doc, err
}
