package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// fetchTimeout bounds FetchStatus when ctx has no deadline: the endpoint
// is local, so anything slower means it is stuck.
const fetchTimeout = 5 * time.Second

// FetchStatus reads /status from the endpoint at addr ("host:port" or an
// http:// URL; DefaultAddr if empty). Errors say which URL failed and why;
// the caller knows best what to suggest (the CLI: is lanleader running
// with --http there?).
func FetchStatus(ctx context.Context, addr string) (StatusDoc, error) {
	var doc StatusDoc
	err := getJSON(ctx, statusURL(addr), "status", &doc)
	return doc, err
}

// getJSON GETs url and decodes its JSON body into v; errors name what and
// the URL.
func getJSON(ctx context.Context, url, what string, v any) error {
	resp, body, err := get(ctx, url, what)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("httpapi: %s from %s: %s: %s", what, url, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("httpapi: %s from %s: decode: %w", what, url, err)
	}
	return nil
}

// get GETs url (within fetchTimeout when ctx has no deadline) and returns
// the response with its body read (at most 16 MiB); errors name what and
// the URL.
func get(ctx context.Context, url, what string) (*http.Response, []byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("httpapi: %s from %s: %w", what, url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// Not *url.Error's own text: it repeats the method and the URL.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("httpapi: %s from %s: %w", what, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("httpapi: %s from %s: read: %w", what, url, err)
	}
	return resp, body, nil
}

func statusURL(addr string) string { return endpointURL(addr, "/status") }

// endpointURL is path on the endpoint at addr ("host:port" or an http://
// URL; DefaultAddr if empty).
func endpointURL(addr, path string) string {
	if addr == "" {
		addr = DefaultAddr
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimSuffix(addr, "/") + path
}
