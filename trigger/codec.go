package trigger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/lanleader/lanleader/jobs"
)

const version = 1

// Op is what a request asks.
type Op uint8

const (
	// OpRun asks for one manual run of Request.Name now.
	OpRun Op = 1
	// OpStatus asks how the run with id Request.Name is doing.
	OpStatus Op = 2
)

// maxName bounds a job name or run id in a request.
const maxName = 128

// Request is what a client asks the leader.
type Request struct {
	Op Op
	// Sent is the client's clock when it sent the request.
	Sent time.Time
	// Name is the job (OpRun) or the run id (OpStatus).
	Name string
}

// Encode returns the request's payload (at most 11+maxName bytes).
func (r Request) Encode() ([]byte, error) {
	if len(r.Name) == 0 || len(r.Name) > maxName {
		return nil, fmt.Errorf("trigger: name of %d bytes, want 1-%d", len(r.Name), maxName)
	}
	b := []byte{version, byte(r.Op)}
	b = binary.BigEndian.AppendUint64(b, uint64(r.Sent.UnixMilli()))
	b = append(b, byte(len(r.Name)))
	return append(b, r.Name...), nil
}

// DecodeRequest parses a request payload; zero padding after it is
// allowed, anything else is an error.
func DecodeRequest(b []byte) (Request, error) {
	if len(b) < 11 || b[0] != version {
		return Request{}, errors.New("trigger: not a version 1 request")
	}
	r := Request{Op: Op(b[1]), Sent: time.UnixMilli(int64(binary.BigEndian.Uint64(b[2:10])))}
	if r.Op != OpRun && r.Op != OpStatus {
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
	// UnknownJob: no job of that name.
	UnknownJob Code = 10
	// Busy: a run of the job is going and its overlap policy is skip.
	Busy Code = 11
	// NotLeading: the answering node cannot act as leader right now.
	NotLeading Code = 12
	// Stale: the request is too old (or from before this node started);
	// nothing ran. Send a new one.
	Stale Code = 13
	// UnknownRun: the run id is not known here (a new leader, or too old).
	UnknownRun Code = 14
	// BadRequest: the request did not decode.
	BadRequest Code = 15
)

var codeNames = map[Code]string{Started: "started", Running: "running", Finished: "finished",
	UnknownJob: "unknown job", Busy: "busy (overlap: skip)", NotLeading: "not leading", Stale: "stale request",
	UnknownRun: "unknown run", BadRequest: "bad request"}

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
	if len(id) > maxName {
		id = id[:maxName]
	}
	b := []byte{version, byte(a.Code), byte(a.Outcome)}
	b = binary.BigEndian.AppendUint16(b, uint16(int16(a.ExitCode)))
	b = append(b, byte(len(id)))
	b = append(b, id...)
	b = append(b, byte(len(msg)))
	return append(b, msg...)
}

// DecodeAnswer parses an answer payload.
func DecodeAnswer(b []byte) (Answer, error) {
	if len(b) < 7 || b[0] != version {
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
	return a, nil
}
