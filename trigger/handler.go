package trigger

import (
	"errors"
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/internal/ratelog"
	"github.com/lanleader/lanleader/jobs"
)

// Runner is what the Handler needs of the job runner (*jobs.Runner).
type Runner interface {
	Trigger(name string) (jobs.RunRecord, error)
	RunByID(runID string) (jobs.RunRecord, bool)
}

// Handler answers trigger requests on the leader (the daemon hands it
// udp.Config.OnRequest's requests). It issues tickets (OpTicket) and runs a
// job only for a ticket it issued, once: a run request with a ticket it
// decided already gets that decision again (tickets.go).
type Handler struct {
	Runner Runner
	// Refuse makes it refuse every request: the daemon sets it when the
	// cluster has no key, so that any device on the LAN could send them,
	// and its config does not opt in (election.trigger_without_key).
	// Each refusal is answered (Refused) and logged at WARN with the
	// sender and the fix, at most every ratelog.DefaultEvery.
	Refuse bool
	// Now is the clock tickets expire by (time.Now if nil).
	Now func() time.Time
	// Logger receives one line per request (nil: slog.Default()).
	Logger *slog.Logger

	tickets tickets
	refused ratelog.Limiter
}

// Sender is who sent a request: the client's id and address.
type Sender struct {
	ID, Addr string
}

// Handle decodes a request payload from a sender and returns the answer
// payload.
func (h *Handler) Handle(from Sender, payload []byte) []byte {
	return h.answer(from, payload).Encode()
}

// RefusedMessage is the answer's message to a request refused for want of
// a key (Handler.Refuse).
const RefusedMessage = "no key: this cluster refuses remote requests (secret_file, or election.trigger_without_key)"

func (h *Handler) answer(from Sender, payload []byte) Answer {
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
		log.Warn("trigger: bad request", "from", from.ID, "addr", from.Addr, "err", err)
		return Answer{Code: BadRequest, Message: err.Error()}
	}
	if h.Refuse {
		h.refused.Warn(log, "trigger: refused a request: this cluster has no key, so any device on the LAN could run jobs",
			"from", from.ID, "addr", from.Addr, "job", req.Name,
			"fix", "make a key with 'lanleader keygen /etc/lanleader/key', copy it to every node and set election.secret_file on each "+
				"(and pass it to trigger); or set election.trigger_without_key: true to accept requests from anyone on the LAN")
		return Answer{Code: Refused, Message: RefusedMessage}
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
	a, repeat, ok := h.tickets.decide(req.Ticket, req.Name, now, func() Answer { return h.run(log, req.Name) })
	switch {
	case !ok:
		log.Warn("trigger: refused a run request whose ticket this process did not issue for the job, or issued over "+TicketLifetime.String()+" ago (a replay, or leadership changed)",
			"job", req.Name)
		return Answer{Code: Stale, Message: "ticket unknown to this leader: nothing ran with it here; ask again"}
	case repeat:
		log.Info("trigger: a repeated run request got its ticket's decision, and started nothing", "job", req.Name, "code", a.Code, "run_id", a.RunID)
	}
	return a
}

// run starts a manual run of job: the decision on a ticket.
func (h *Handler) run(log *slog.Logger, job string) Answer {
	rec, err := h.Runner.Trigger(job)
	switch {
	case errors.Is(err, jobs.ErrUnknownJob):
		return Answer{Code: UnknownJob, Message: "no job named " + job}
	case errors.Is(err, jobs.ErrOverlap):
		return Answer{Code: Busy, Message: "a run of " + job + " is still going and its overlap is skip"}
	case err != nil:
		return Answer{Code: NotLeading, Message: err.Error()}
	}
	log.Info("trigger: manual run started", "job", job, "run_id", rec.RunID, "term", rec.Term)
	return Answer{Code: Started, RunID: rec.RunID}
}
