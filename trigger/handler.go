package trigger

import (
	"errors"
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// Runner is what the Handler needs of the job runner (*jobs.Runner).
type Runner interface {
	Trigger(name string) (jobs.RunRecord, error)
	RunByID(runID string) (jobs.RunRecord, bool)
}

// Handler answers trigger requests on the leader: give Handle to
// udp.Config.OnRequest. It issues tickets (OpTicket) and runs a job only
// for a ticket it issued and has not used (tickets.go).
type Handler struct {
	Runner Runner
	// Now is the clock tickets expire by (time.Now if nil).
	Now func() time.Time
	// Logger receives one line per request (nil: slog.Default()).
	Logger *slog.Logger

	tickets tickets
}

// Handle decodes a request payload and returns the answer payload.
func (h *Handler) Handle(payload []byte) []byte {
	return h.answer(payload).Encode()
}

func (h *Handler) answer(payload []byte) Answer {
	log := h.Logger
	if log == nil {
		log = slog.Default()
	}
	now := time.Now()
	if h.Now != nil {
		now = h.Now()
	}
	req, err := DecodeRequest(payload)
	if err != nil {
		log.Warn("trigger: bad request", "err", err)
		return Answer{Code: BadRequest, Message: err.Error()}
	}
	switch req.Op {
	case OpStatus:
		rec, ok := h.Runner.RunByID(req.Name)
		switch {
		case !ok:
			return Answer{Code: UnknownRun, RunID: req.Name, Message: "run not known on this leader"}
		case rec.Outcome == jobs.OutcomeRunning:
			return Answer{Code: Running, RunID: rec.RunID}
		default:
			return Answer{Code: Finished, RunID: rec.RunID, Outcome: rec.Outcome, ExitCode: rec.ExitCode, Message: rec.Error}
		}
	case OpTicket:
		return Answer{Code: Ticket, Ticket: h.tickets.issue(req.Name, now)}
	}
	if !h.tickets.use(req.Ticket, req.Name, now) {
		log.Warn("trigger: refused a run request whose ticket this process did not issue for the job or already used (a replay, or leadership changed)",
			"job", req.Name)
		return Answer{Code: Stale, Message: "ticket unknown to this leader or already used: nothing ran; ask again"}
	}
	rec, err := h.Runner.Trigger(req.Name)
	switch {
	case errors.Is(err, jobs.ErrUnknownJob):
		return Answer{Code: UnknownJob, Message: "no job named " + req.Name}
	case errors.Is(err, jobs.ErrOverlap):
		return Answer{Code: Busy, Message: "a run of " + req.Name + " is still going and its overlap is skip"}
	case err != nil:
		return Answer{Code: NotLeading, Message: err.Error()}
	}
	log.Info("trigger: manual run started", "job", req.Name, "run_id", rec.RunID, "term", rec.Term)
	return Answer{Code: Started, RunID: rec.RunID}
}
