// Package httpready waits for an HTTP server to answer: a server just
// started (Tomcat, a test server) is ready when a GET of a URL it serves
// returns a status below 400.
package httpready

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Interval is the time between tries, and TryTimeout bounds each try.
const (
	Interval   = 200 * time.Millisecond
	TryTimeout = 5 * time.Second
)

// Answers makes one GET of url, bounded by timeout, and reports whether
// it answered with a status below 400, with what it got: the status line,
// or the error.
func Answers(ctx context.Context, url string, timeout time.Duration) (ok bool, last string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode < 400, resp.Status
}

// Wait tries url every Interval until it answers (see Answers), timeout
// passes or ctx ends. Before each try it calls alive, when not nil, and
// returns its error: a server that exited will not answer. A timeout
// error says what the last try got; when ctx ends first (a cancel, a
// signal), the error wraps ctx's and does not blame the server.
func Wait(ctx context.Context, url string, timeout time.Duration, alive func() error) error {
	if _, err := http.NewRequest(http.MethodGet, url, nil); err != nil {
		return fmt.Errorf("ready URL %q: %w", url, err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	last := "no answer yet"
	for {
		if alive != nil {
			if err := alive(); err != nil {
				return err
			}
		}
		ok, got := Answers(ctx, url, TryTimeout)
		if ok {
			return nil
		}
		if ctx.Err() == nil {
			last = got
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return fmt.Errorf("waiting for %s to answer: %w", url, err)
			}
			return fmt.Errorf("%s did not answer within %s (last: %s)", url, timeout, last)
		case <-tick.C:
		}
	}
}
