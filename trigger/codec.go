package trigger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/lanleader/lanleader/jobs"
)

// Payload versions. A request is version 2: version 1 carried the
// client's clock instead of a ticket, and a leader refuses it (its replay
// protection compared clocks). An answer is version 1.
const (
	requestVersion = 2
	answerVersion  = 1
)

// Op is what a request asks.
type Op uint8

const (
	// OpRun asks for one manual run of Request.Name now, with a Ticket
	// this leader issued for it (OpTicket).
	OpRun Op = 1
	// OpStatus asks how the run with id Request.Name is doing.
	OpStatus Op = 2
	// OpTicket asks for a ticket to run Request.Name: the leader answers
	// Ticket with a number it will accept once, for that job (Handler).
	OpTicket Op = 3
)

// maxName bounds a job name or run id in a request.
const maxName = 128

// Request is what a client asks the leader.
type Request struct {
	Op Op
	// Ticket is the leader's ticket for OpRun (Answer.Ticket of an
	// OpTicket answer); zero for the other ops.
	Ticket uint64
	// Name is the job (OpRun, OpTicket) or the run id (OpStatus).
	Name string
}

// Repeatable reports whether r may be sent again, as a fresh request, while
// no answer came: whether the leader acting on two copies of it does what
// it does for one. OpTicket issues a ticket and runs nothing (the client
// uses the first it hears; the others expire unused); OpStatus only reads;
// OpRun is decided once per ticket (tickets.go), so a copy gets the first
// one's answer and starts nothing. An op added later is sent once until it
// says here why a copy is safe.
func (r Request) Repeatable() bool {
	switch r.Op {
	case OpTicket, OpStatus, OpRun:
		return true
	}
	return false
}

// Encode returns the request's payload (at most 11+maxName bytes).
func (r Request) Encode() ([]byte, error) {
	if len(r.Name) == 0 || len(r.Name) > maxName {
		return nil, fmt.Errorf("trigger: name of %d bytes, want 1-%d", len(r.Name), maxName)
	}
	b := []byte{requestVersion, byte(r.Op)}
	b = binary.BigEndian.AppendUint64(b, r.Ticket)
	b = append(b, byte(len(r.Name)))
	return append(b, r.Name...), nil
}

// DecodeRequest parses a request payload; zero padding after it is
// allowed, anything else is an error.
func DecodeRequest(b []byte) (Request, error) {
	switch {
	case len(b) >= 1 && b[0] == 1:
		return Request{}, errors.New("trigger: a version 1 request, from a lanleader trigger older than this leader: upgrade it")
	case len(b) < 11 || b[0] != requestVersion:
		return Request{}, errors.New("trigger: not a version 2 request")
	}
	r := Request{Op: Op(b[1]), Ticket: binary.BigEndian.Uint64(b[2:10])}
	if r.Op != OpRun && r.Op != OpStatus && r.Op != OpTicket {
		return Request{}, fmt.Errorf("trigger: unknown op %d", b[1])
	}
	n := int(b[10])
	if n == 0 || n > maxName || len(b) < 11+n {
		return Request{}, errors.New("trigger: bad name length")
	}
	r.Name = string(b[11 : 11+n])
	for _, c := range b[11+n:] {
		if c != 0 {
			return Request{}, errors.New("trigger: trailing bytes")
		}
	}
	return r, nil
}

// Code is the leader's verdict.
type Code uint8

// Codes go on the wire: only append.
const (
	// Started: the manual run started; RunID names it.
	Started Code = 1
	// Running: the run asked about is still going.
	Running Code = 2
	// Finished: the run asked about ended; Outcome and ExitCode say how.
	Finished Code = 3
	// Ticket: Answer.Ticket may be used once, for the job asked about.
	Ticket Code = 4
	// UnknownJob: no job of that name.
	UnknownJob Code = 10
	// Busy: a run of the job is going and its overlap policy is skip.
	Busy Code = 11
	// NotLeading: the answering node cannot act as leader right now.
	NotLeading Code = 12
	// Stale: the request's ticket is not one this leader issued for the
	// job and has not used yet (a replay, a ticket of another leader or
	// of this node's previous process, or one too old); nothing ran. Ask
	// for a new ticket.
	Stale Code = 13
	// UnknownRun: the run id is not known here (a new leader, or too old).
	UnknownRun Code = 14
	// BadRequest: the request did not decode.
	BadRequest Code = 15
	// Refused: the cluster has no key and does not accept requests
	// without one (Handler.Refuse); nothing ran.
	Refused Code = 16
)

var codeNames = map[Code]string{Started: "started", Running: "running", Finished: "finished", Ticket: "ticket",
	UnknownJob: "unknown job", Busy: "busy (overlap: skip)", NotLeading: "not leading", Stale: "stale request",
	UnknownRun: "unknown run", BadRequest: "bad request", Refused: "refused"}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// maxMessage bounds Answer.Message.
const maxMessage = 120

// Answer is the leader's reply.
type Answer struct {
	Code Code
	// RunID names the run (Started, Running, Finished).
	RunID string
	// Ticket is the ticket a Ticket answer issues; on the wire it takes
	// RunID's place, as 16 hex digits.
	Ticket uint64
	// Outcome and ExitCode: how a Finished run ended.
	Outcome  jobs.Outcome
	ExitCode int
	// Message explains a refusal, for people.
	Message string
}

// Encode returns the answer's payload, at most 6+maxName+maxMessage bytes
// (below the padded request's size, so the leader never amplifies).
func (a Answer) Encode() []byte {
	msg := a.Message
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	id := a.RunID
	if a.Code == Ticket {
		id = fmt.Sprintf("%016x", a.Ticket)
	}
	if len(id) > maxName {
		id = id[:maxName]
	}
	b := []byte{answerVersion, byte(a.Code), byte(a.Outcome)}
	b = binary.BigEndian.AppendUint16(b, uint16(int16(a.ExitCode)))
	b = append(b, byte(len(id)))
	b = append(b, id...)
	b = append(b, byte(len(msg)))
	return append(b, msg...)
}

// DecodeAnswer parses an answer payload.
func DecodeAnswer(b []byte) (Answer, error) {
	if len(b) < 7 || b[0] != answerVersion {
		return Answer{}, errors.New("trigger: not a version 1 answer")
	}
	a := Answer{Code: Code(b[1]), Outcome: jobs.Outcome(b[2]), ExitCode: int(int16(binary.BigEndian.Uint16(b[3:5])))}
	rest := b[5:]
	n := int(rest[0])
	if len(rest) < 1+n+1 {
		return Answer{}, errors.New("trigger: short answer")
	}
	a.RunID = string(rest[1 : 1+n])
	rest = rest[1+n:]
	m := int(rest[0])
	if len(rest) != 1+m {
		return Answer{}, errors.New("trigger: bad answer length")
	}
	a.Message = string(rest[1:])
	if a.Code == Ticket {
		t, err := strconv.ParseUint(a.RunID, 16, 64)
		if err != nil || len(a.RunID) != 16 {
			return Answer{}, fmt.Errorf("trigger: bad ticket %q", a.RunID)
		}
		a.Ticket, a.RunID = t, ""
	}
	return a, nil
}
