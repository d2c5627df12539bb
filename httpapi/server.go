package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ratelog"
	"github.com/lanleader/lanleader/jobs"
	"github.com/lanleader/lanleader/metrics"
)

// DefaultAddr is where the endpoint listens unless told otherwise:
// loopback only, since /status shows job names and the cluster's layout.
const DefaultAddr = "127.0.0.1:7484"

// shutdownGrace bounds how long Serve waits for requests in flight once
// its context is done.
const shutdownGrace = 5 * time.Second

// Config configures a Server. Elector is required; the rest is optional.
type Config struct {
	// Elector supplies the status for /status, /leader and /readyz.
	Elector election.Elector
	// MayAct reports whether this node may start a run now: the job
	// runner's start check (jobs.Runner.MayAct), which /leader and
	// /status's may_act report. Nil means "the elector says it leads".
	MayAct func() bool
	// Jobs returns the job runner's per-job status, the "jobs" field of
	// /status. Nil leaves the field out. Called per request.
	Jobs func() []jobs.JobStatus
	// Services returns the leader-only services' state on this node, the
	// "services" field of /status and /jobs. Nil leaves it out.
	Services func() []jobs.ServiceStatus
	// JobViews returns every job's schedule, next instants and at most
	// runs recent runs, for /jobs and the status page. Nil serves an empty
	// list. Called per request.
	JobViews func(runs int) []jobs.JobView
	// Nodes returns the other nodes heard (udp mode), for the status page.
	// Nil lists only this node and the leader it knows.
	Nodes func() []NodeView
	// Quorum returns quorum mode's state for the status page; nil (or Size
	// 0) means quorum mode is off.
	Quorum func() QuorumView
	// Changes records leadership changes for the status page; nil shows
	// none. Its Callbacks must be given to the Elector.
	Changes *ChangeLog
	// Extra returns any further view (peers heard, ...), encoded as the
	// "extra" field. Nil leaves the field out. Called per request.
	Extra func() any
	// Metrics is served on /metrics; nil answers 404 there.
	Metrics *metrics.Metrics
	// Version is reported in /status.
	Version string
	// Logger receives listen, shutdown and encoding failures. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Hosts are the names, besides "localhost", that a request's Host
	// header may give (a DNS name of this node); IP addresses need no
	// listing. Requests naming anything else are refused (see exposure).
	Hosts []string
	// OutputTails serves runs' output tails (RunRecord.Output) even when
	// the endpoint listens beyond loopback; on loopback they are always
	// served. A job's output may hold secrets it printed.
	OutputTails bool
	// MaxConns caps the open connections (see connCap); 0 means
	// DefaultMaxConns.
	MaxConns int
}

// The endpoint's deadlines. A request's headers must arrive within
// ReadHeaderTimeout and the whole request within ReadTimeout; its answer
// must be written within WriteTimeout; a connection idle between requests
// is closed after IdleTimeout, also when it sent the first bytes of its
// next request (fewer than four do not start the header timeout).
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 10 * time.Second
	IdleTimeout       = 30 * time.Second
)

// Server is the HTTP endpoint. Create it with New.
type Server struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
	// badHost and shedLog limit the WARN lines a flood causes.
	badHost, shedLog ratelog.Limiter
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Server{cfg: cfg, log: log, now: time.Now}
}

// Handler returns the endpoint's routes: /livez, /readyz, /status,
// /leader, /jobs, /metrics, and the status page at /. It is for a server of
// the caller's own: it checks no Host, and, not knowing where it is served,
// serves output tails only if Config.OutputTails says so. ServeListener
// serves it with the checks its address calls for.
func (s *Server) Handler() http.Handler {
	return s.handler(handlerExposure(s.cfg))
}

func (s *Server) handler(exp exposure) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		// The process answers, so it lives; nothing more is checked.
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { s.status(w, exp) })
	mux.HandleFunc("GET /leader", s.leaderHandler)
	mux.HandleFunc("GET /jobs", func(w http.ResponseWriter, r *http.Request) { s.jobsHandler(w, r, exp) })
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics.Handler())
	}
	mux.HandleFunc("GET /{$}", s.page)
	return mux
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	ready, why := Readiness(s.cfg.Elector, s.cfg.Elector.Status())
	if !ready {
		writeText(w, http.StatusServiceUnavailable, "not ready: "+why)
		return
	}
	writeText(w, http.StatusOK, "ready: "+why)
}

func (s *Server) status(w http.ResponseWriter, exp exposure) {
	doc := s.statusDoc(exp)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		// Every part that can fail was encoded separately already.
		s.log.Error("httpapi: encode status", "err", err)
		writeText(w, http.StatusInternalServerError, "encode status: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}

// statusDoc builds the document /status serves.
func (s *Server) statusDoc(exp exposure) StatusDoc {
	l := s.leadership()
	st := l.Status
	ready, _ := Readiness(s.cfg.Elector, st)
	doc := StatusDoc{
		Node: st.Node, Role: st.Role, Term: st.Term, Leader: st.Leader, Since: st.Since,
		MayAct: &l.MayAct, Ready: ready, Version: s.cfg.Version, Time: s.now(),
	}
	if s.cfg.Jobs != nil {
		doc.Jobs = s.view("jobs", func() any { return exp.statuses(s.cfg.Jobs()) }, &doc.Warnings)
	}
	doc.Services = s.services()
	doc.Extra = s.view("extra", s.cfg.Extra, &doc.Warnings)
	return doc
}

// view encodes one optional part; a part that fails to encode becomes a
// warning so the rest of the status still reaches the operator.
func (s *Server) view(name string, f func() any, warnings *[]string) json.RawMessage {
	if f == nil {
		return nil
	}
	v := f()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("httpapi: encode status part", "part", name, "err", err)
		*warnings = append(*warnings, fmt.Sprintf("%s: %v", name, err))
		return nil
	}
	return b
}

// Serve listens on addr (DefaultAddr if empty) and serves Handler until
// ctx is done, then shuts down gracefully and returns nil. It returns an
// error if it cannot listen or the server fails.
func (s *Server) Serve(ctx context.Context, addr string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("httpapi: listen %s: %w", addr, err)
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on a listener the caller opened (tests use port
// 0). It closes ln. It serves Handler's routes only to requests whose Host
// names the endpoint, leaves output tails out beyond loopback unless
// Config.OutputTails, holds every client to the endpoint's deadlines and
// keeps at most Config.MaxConns connections open.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	addr := ln.Addr().String()
	exp := exposureOf(ln.Addr(), s.cfg)
	switch {
	case exp.bound.IsLoopback():
		s.log.Info("httpapi: listening", "addr", addr, "status_page", "http://"+addr+"/",
			"see", "lanleader status, lanleader jobs")
	case exp.outputTails:
		s.log.Warn("httpapi: listening beyond loopback; /status, /jobs (with the runs' output tails) and /metrics are readable by anyone who can reach this address", "addr", addr)
	default:
		s.log.Warn("httpapi: listening beyond loopback; /status, /jobs and /metrics are readable by anyone who can reach this address (output tails left out: election.http_output_tails serves them)", "addr", addr)
	}
	conns := newConnCap(s.maxConns(), s.shed)
	srv := &http.Server{
		Handler:           exp.guard(s.handler(exp), s.refusedHost),
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ConnState:         conns.track,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(conns.listener(ln)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("httpapi: serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("httpapi: shut down %s: %w", addr, err)
	}
	return nil
}

// refusedHost counts and logs (rate-limited) a request refused for its
// Host: DNS rebinding, or a name of this node missing from Config.Hosts.
func (s *Server) refusedHost(host string) {
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.HTTPRefused("bad_host")
	}
	s.badHost.Warn(s.log, "httpapi: refused a request whose Host names no address of this endpoint (a web page rebinding DNS, or a name to list in election.http_hosts)", "host", host)
}

// shed counts and logs (rate-limited) a connection closed at the cap.
func (s *Server) shed(why string) {
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.HTTPRefused("conn_cap")
	}
	s.shedLog.Warn(s.log, "httpapi: at the connection cap; "+why, "max_conns", s.maxConns())
}

func (s *Server) maxConns() int {
	if s.cfg.MaxConns <= 0 {
		return DefaultMaxConns
	}
	return s.cfg.MaxConns
}

// services returns Config.Services' answer, nil without one.
func (s *Server) services() []jobs.ServiceStatus {
	if s.cfg.Services == nil {
		return nil
	}
	return s.cfg.Services()
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}
