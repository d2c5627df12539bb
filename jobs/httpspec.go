package jobs

import (
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// HTTPRequest is the request an http: job makes, once per attempt, instead
// of running a process: what an application that exposes its jobs as
// endpoints needs, from any image (no shell, no curl). The response's status
// code stands where a process's exit code does (RunRecord.ExitCode), a tail
// of its body where its output does.
type HTTPRequest struct {
	// Method is the request method; empty means POST (a run is an action).
	Method string
	// URL is the http:// or https:// URL requested. Redirects are not
	// followed: a 3xx answer is the result.
	URL string
	// Headers are added to every request. The headers that carry the run's
	// identity (Idempotency-Key, Lanleader-*) and those the transport
	// computes (Content-Length, Transfer-Encoding, Connection) are set by
	// lanleader and refused here; Host sets the request's host.
	Headers map[string]string
	// Body is sent as is with every attempt; empty sends none.
	Body string
	// Accept lists the status codes that count as success: codes ("204")
	// and classes ("2xx"). Empty means 2xx.
	Accept []string
	// CAFile, if set, is a PEM file of the certificate authorities an
	// https URL's certificate must chain to, instead of the system's. It is
	// read at each attempt, so a renewed file needs no reload.
	CAFile string
}

// DefaultHTTPMethod is the method of an http: job without one.
const DefaultHTTPMethod = http.MethodPost

// method returns the request method, defaulted.
func (h *HTTPRequest) method() string {
	if h.Method == "" {
		return DefaultHTTPMethod
	}
	return h.Method
}

// reservedHeaders are the headers lanleader sets on every request (the
// run's identity) or the transport computes; an http: job may not set them.
var reservedHeaders = []string{"Idempotency-Key", "Content-Length", "Transfer-Encoding", "Connection"}

// identityHeaderPrefix starts the names of the headers that carry the run's
// identity besides Idempotency-Key (Lanleader-Term, ...; httpexec.go).
const identityHeaderPrefix = "Lanleader-"

// validate checks h on its own; problems are *FieldErrors named
// http.KEY (http.headers.NAME for one header).
func (h *HTTPRequest) validate() []error {
	var errs []error
	if h.Method != "" && !isToken(h.Method) {
		errs = append(errs, fieldErr("http.method", "%q is not a method (letters, as GET or POST)", h.Method))
	}
	u, err := url.Parse(h.URL)
	switch {
	case h.URL == "":
		errs = append(errs, fieldErr("http.url", "required"))
	case err != nil:
		errs = append(errs, fieldErr("http.url", "%q: %v", h.URL, unwrapURLError(err)))
	case u.Scheme != "http" && u.Scheme != "https":
		errs = append(errs, fieldErr("http.url", "%q: want an http:// or https:// URL", h.URL))
	case u.Host == "":
		errs = append(errs, fieldErr("http.url", "%q has no host", h.URL))
	case !validPort(u.Port()):
		errs = append(errs, fieldErr("http.url", "%q: port %s is not 1-65535", h.URL, u.Port()))
	case h.CAFile != "" && u.Scheme != "https":
		errs = append(errs, fieldErr("http.ca_file", "given for %q, which is not https", h.URL))
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(h.Headers)) {
		field := "http.headers." + name
		canon := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case !isToken(name):
			errs = append(errs, fieldErr(field, "%q is not a header name", name))
		case slices.Contains(reservedHeaders, canon) || strings.HasPrefix(canon, identityHeaderPrefix):
			errs = append(errs, fieldErr(field, "set by lanleader (the run's identity, or computed): remove it"))
		case seen[canon] != "":
			errs = append(errs, fieldErr(field, "the same header as %q (names are case-insensitive)", seen[canon]))
		case !validHeaderValue(h.Headers[name]):
			errs = append(errs, fieldErr(field, "value has a line break or control character"))
		}
		seen[canon] = name
	}
	if _, err := parseAccept(h.Accept); err != nil {
		errs = append(errs, fieldErr("http.accept", "%v", err))
	}
	if h.CAFile != "" {
		if _, err := loadCAFile(h.CAFile); err != nil {
			errs = append(errs, fieldErr("http.ca_file", "%v", err))
		}
	}
	return errs
}

// accepted is a job's set of successful status codes.
type accepted struct {
	codes   []int
	classes []int // 2 for 2xx
	text    string
}

// has reports whether code counts as success.
func (a accepted) has(code int) bool {
	return slices.Contains(a.codes, code) || slices.Contains(a.classes, code/100)
}

// parseAccept reads Accept: codes 100-599 and classes 1xx-5xx; none means
// 2xx.
func parseAccept(list []string) (accepted, error) {
	if len(list) == 0 {
		return accepted{classes: []int{2}, text: "2xx"}, nil
	}
	var a accepted
	for _, s := range list {
		if len(s) == 3 && s[1:] == "xx" && s[0] >= '1' && s[0] <= '5' {
			a.classes = append(a.classes, int(s[0]-'0'))
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return accepted{}, fmt.Errorf("%q is not a status code (100-599) or class (1xx-5xx)", s)
		}
		a.codes = append(a.codes, n)
	}
	a.text = strings.Join(list, ", ")
	return a, nil
}

// loadCAFile reads a PEM file of CA certificates into a pool.
func loadCAFile(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err // "open PATH: reason"
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// isToken reports whether s is an HTTP token (RFC 9110): a method or a
// header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v may be sent as a header value: no
// control characters but tab (no line breaks, no NUL).
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// validPort says whether port, a URL's (digits, url.Parse checked), is
// empty (the scheme's) or one a connection can go to.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}
