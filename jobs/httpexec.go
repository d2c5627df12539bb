package jobs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/lanleader/lanleader/internal/proc"
)

// MaxBodyRead bounds how much of a response's body an http: job's attempt
// reads. Its lines are logged and the last OutputTailLines kept, as a
// process's output is; past the bound the body is dropped (and the tail
// says so) and the connection closed.
const MaxBodyRead = 1 << 20

// BodyStream names the response body among an attempt's output streams
// (the "stream" of its "jobs: output" log lines).
const BodyStream = "body"

// Timeouts of an http: job's connection. The job's timeout bounds the whole
// attempt; these only keep a dead address from taking the operating
// system's minutes when the job has none.
const (
	httpDialTimeout      = 30 * time.Second
	httpHandshakeTimeout = 15 * time.Second
)

// httpExecutor makes an http: job's request: redirects are not followed,
// certificates are verified (against HTTPRequest.CAFile when set), and the
// run's identity goes in headers. Aborting ctx aborts the request at once.
type httpExecutor struct {
	// transport, if set, replaces the transport built for each attempt
	// (tests: an in-memory one inside a synctest bubble).
	transport http.RoundTripper
	// dial, if set, makes the built transport's connections instead of
	// net.Dialer (tests).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// stopTime: the request is aborted as ctx ends (what the server already
// does with it, its Idempotency-Key covers).
func (h httpExecutor) stopTime(time.Duration) time.Duration { return 0 }

// licensed: a request has no shim; its abort is lanleader's.
func (h httpExecutor) licensed() bool { return false }

func (h httpExecutor) execute(ctx context.Context, a *attemptCall) attemptResult {
	start := time.Now()
	res := h.do(ctx, a)
	res.Duration = time.Since(start)
	return res
}

func (h httpExecutor) do(ctx context.Context, a *attemptCall) attemptResult {
	spec := a.spec.HTTP
	fail := func(format string, args ...any) attemptResult {
		return attemptResult{Code: -1, Stopped: ctx.Err() != nil, What: fmt.Sprintf(format, args...)}
	}
	accept, err := parseAccept(spec.Accept)
	if err != nil { // validated with the job: cannot happen
		return fail("http.accept: %v", err)
	}
	guard := &sendGuard{mayStart: a.mayStart}
	tr := h.transport
	if tr == nil {
		t, err := newHTTPTransport(spec, guard.dialer(h.dial))
		if err != nil {
			return fail("http.ca_file: %v", err)
		}
		defer t.CloseIdleConnections()
		tr = t
	}
	client := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := newJobRequest(guard.trace(ctx), spec, a)
	if err != nil {
		return fail("%s %s: %v", spec.method(), spec.URL, unwrapURLError(err))
	}
	resp, err := client.Do(req)
	if err != nil {
		if why := guard.refusedWhy(); why != "" {
			res := fail("%s %s: request not sent: %s", spec.method(), spec.URL, why)
			res.Refused = why
			return res
		}
		if ctx.Err() != nil {
			return fail("%s %s: request aborted", spec.method(), spec.URL)
		}
		return fail("%s %s: %s", spec.method(), spec.URL, describeTransportError(err))
	}
	defer resp.Body.Close()
	cut, err := readBody(resp.Body, a.output)
	if err != nil {
		if ctx.Err() != nil {
			return fail("%s %s: HTTP %s, aborted while reading the body", spec.method(), spec.URL, resp.Status)
		}
		return fail("%s %s: HTTP %s, reading the body: %v", spec.method(), spec.URL, resp.Status, err)
	}
	res := attemptResult{Code: resp.StatusCode, OK: accept.has(resp.StatusCode), What: "HTTP " + resp.Status}
	if cut {
		res.What += fmt.Sprintf(", body cut after %d bytes", MaxBodyRead)
	}
	if res.OK {
		return res
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		res.What += ", redirect to " + loc + " not followed"
	}
	res.What += " (accept: " + accept.text + ")"
	return res
}

// newJobRequest builds the request of one attempt: the job's method, URL,
// headers and body, then the run's identity, which the job cannot override.
func newJobRequest(ctx context.Context, spec *HTTPRequest, a *attemptCall) (*http.Request, error) {
	var body io.Reader
	if spec.Body != "" {
		body = strings.NewReader(spec.Body)
	}
	req, err := http.NewRequestWithContext(ctx, spec.method(), spec.URL, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "lanleader")
	for name, v := range spec.Headers {
		if textproto.CanonicalMIMEHeaderKey(name) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(name, v)
	}
	req.Header.Set("Idempotency-Key", IdempotencyKey(*a.rec))
	for _, v := range a.identity {
		req.Header.Set(v.headerName(), v.Value)
	}
	return req, nil
}

// newHTTPTransport returns a transport for one attempt, its connections
// made by dial: no connection is kept between runs (they are minutes or
// hours apart, and a failover must not find one half-open), certificates
// are checked against spec.CAFile when set, else the system's roots.
func newHTTPTransport(spec *HTTPRequest, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*http.Transport, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if spec.CAFile != "" {
		pool, err := loadCAFile(spec.CAFile)
		if err != nil {
			return nil, err
		}
		tlsConf.RootCAs = pool
	}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dial,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: httpHandshakeTimeout,
		DisableKeepAlives:   true,
		// HTTP/1.1 only: one request per connection gains nothing from
		// HTTP/2, whose control frames would be written while the answer
		// comes, past the point sendGuard guards up to.
		ForceAttemptHTTP2: false,
	}, nil
}

// readBody delivers the body's lines to output, at most MaxBodyRead bytes,
// and says whether the body went on past them: then the piece of a line
// the bound cut is delivered partial (it is not a line the application
// wrote), and a last line says the rest was not read.
func readBody(body io.Reader, output func(stream, line string, partial bool)) (cut bool, err error) {
	lr := &io.LimitedReader{R: body, N: MaxBodyRead}
	tr := &lastByteReader{r: lr}
	// Each line is held until the next one comes: only at the end is it
	// known whether the last one was cut.
	var held struct {
		line    string
		partial bool
		ok      bool
	}
	flush := func(cutHere bool) {
		if held.ok {
			output(BodyStream, held.line, held.partial || cutHere)
			held.ok = false
		}
	}
	err = proc.ReadLines(tr, BodyStream, func(_ proc.Stream, line string, partial bool) {
		flush(false)
		held.line, held.partial, held.ok = line, partial, true
	})
	if err == nil && lr.N == 0 {
		var one [1]byte
		n, _ := body.Read(one[:])
		cut = n > 0
	}
	flush(cut && tr.last != '\n')
	if cut {
		output(BodyStream, fmt.Sprintf("(body cut after %d bytes: the rest was not read)", MaxBodyRead), false)
	}
	return cut, err
}

// lastByteReader remembers the last byte read through it.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// describeTransportError says why a request got no response, with a hint
// for a certificate that does not verify.
func describeTransportError(err error) string {
	err = unwrapURLError(err)
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown), errors.As(err, &verify) && !errors.As(err, &host):
		return err.Error() + " (the certificate must chain to the system's CAs, or to http.ca_file's)"
	case errors.As(err, &host):
		return err.Error() + " (the URL's host must be a name or address the certificate lists)"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}
