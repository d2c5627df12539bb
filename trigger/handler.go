package trigger

import (
	"errors"
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

// MaxAge is how old (by the client's clock, against this node's) a run
// request may be, either way. It is well under the protocol's one-minute
// replay memory, so a replay the protocol no longer remembers is refused
// here as stale.
const MaxAge = 30 * time.Second

// Runner is what the Handler needs of the job runner (*jobs.Runner).
type Runner interface {
	Trigger(name string) (jobs.RunRecord, error)
	RunByID(runID string) (jobs.RunRecord, bool)
}

// Handler answers trigger requests on the leader: give Handle to
// udp.Config.OnRequest.
type Handler struct {
	Runner Runner
	// Started is when this node started: run requests sent before it are
	// refused, since this node cannot know whether it already ran them.
	Started time.Time
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Logger receives one line per request (nil: slog.Default()).
	Logger *slog.Logger
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
	}
	if age := now.Sub(req.Sent); age > MaxAge || age < -MaxAge {
		log.Warn("trigger: refused a stale request (a replay, or clocks apart)", "job", req.Name, "age", age)
		return Answer{Code: Stale, Message: "request sent " + age.Round(time.Second).String() + " ago by its clock: refused (replay, or clocks differ)"}
	}
	if req.Sent.Before(h.Started) {
		log.Warn("trigger: refused a request sent before this node started", "job", req.Name)
		return Answer{Code: Stale, Message: "request older than this leader's start: send it again"}
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
