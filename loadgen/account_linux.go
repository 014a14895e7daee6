// Accounting: histograms, counters, errors and the per-interval snapshots.

package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

type loopStats struct {
	h                                Histograms
	ivLatency, ivService, ivLag      *hdrhistogram.Histogram
	requests, sent, bytes, bodyBytes uint64
	keepAliveResp, lengthMismatch    uint64
	errConnect, errRead, errWrite    uint64
	errTimeout, errStatus, errTLS    uint64
	handshakes, resumed              uint64 // TLS
	tlsVersion, tlsCipher            string
	connects, reconnects, incomplete uint64
	ivRequests, ivErrors, ivBytes    uint64
	totalSent                        uint64 // including warm-up
	drainRequests, drainErrors       uint64 // after the window (Result.Drain)
	drainTimeouts                    uint64
	drainLatency                     *hdrhistogram.Histogram
	dropped                          int64
	errnos                           map[errnoKey]uint64
	rateSamples                      []float64
	docLen                           int64
	server                           string
	statuses                         statusCounts  // measured responses by class
	targets                          []targetStats // per target, with several
	sched                            threadSched   // the loop's thread over the run
}

// targetStats is one loop's count of one target's requests.
type targetStats struct {
	requests, errors uint64
	statuses         statusCounts
	latency          *hdrhistogram.Histogram
}

type ivPart struct {
	index                   int
	start, end              int64
	requests, errors, bytes uint64
	latency, service, lag   *hdrhistogram.Histogram
}

func collectIntervals(r *runner, done chan struct{}) {
	defer close(done)
	type acc struct {
		parts int
		p     ivPart
	}
	pending := map[int]*acc{}
	cum := NewHistogram()
	var totReq, totErr uint64
	next := 0
	emit := func(a *acc) {
		cum.Merge(a.p.latency)
		totReq += a.p.requests
		totErr += a.p.errors
		s := Snapshot{
			Index: a.p.index, Start: time.Duration(a.p.start), End: time.Duration(a.p.end),
			RunStart: r.start.Add(time.Duration(r.warmupNs)),
			Requests: a.p.requests, Errors: a.p.errors, Bytes: a.p.bytes,
			Latency: a.p.latency, Service: a.p.service, Cumulative: cum,
			TotalRequests: totReq, TotalErrors: totErr,
		}
		if r.pacer != nil {
			s.Lag = a.p.lag
		}
		r.cfg.OnInterval(s)
	}
	defer func() {
		// Loops that ended early reported fewer intervals: emit the rest.
		for ; len(pending) > 0; next++ {
			if a := pending[next]; a != nil {
				delete(pending, next)
				emit(a)
			}
		}
	}()
	for part := range r.ivCh {
		a := pending[part.index]
		if a == nil {
			a = &acc{p: ivPart{index: part.index, start: part.start, end: part.end, latency: NewHistogram(), service: NewHistogram(), lag: NewHistogram()}}
			pending[part.index] = a
		}
		a.parts++
		a.p.requests += part.requests
		a.p.errors += part.errors
		a.p.bytes += part.bytes
		a.p.latency.Merge(part.latency)
		a.p.service.Merge(part.service)
		a.p.lag.Merge(part.lag)
		if part.end > a.p.end {
			a.p.end = part.end
		}
		for {
			a := pending[next]
			if a == nil || a.parts < r.nloops {
				break
			}
			delete(pending, next)
			emit(a)
			next++
		}
	}
}

// emitInterval sends the current interval, ending at end, to the
// collector. Interval boundaries are absolute (warm-up + k × Interval), so
// every loop reports the same indexes.
func (l *loop) emitInterval(end int64) {
	r := l.r
	if end > r.endNs {
		end = r.endNs
	}
	r.ivCh <- ivPart{
		index: l.ivIndex, start: l.ivStart - r.warmupNs, end: end - r.warmupNs,
		requests: l.st.ivRequests, errors: l.st.ivErrors, bytes: l.st.ivBytes,
		latency: l.st.ivLatency, service: l.st.ivService, lag: l.st.ivLag,
	}
	l.ivIndex++
	l.ivStart = l.nextIv
	l.nextIv += int64(r.cfg.Interval)
	l.st.ivRequests, l.st.ivErrors, l.st.ivBytes = 0, 0, 0
	l.st.ivLatency, l.st.ivService, l.st.ivLag = NewHistogram(), NewHistogram(), NewHistogram()
}

// flushInterval emits the intervals that ended by now and, at the end of
// the run, the last partial one.
func (l *loop) flushInterval(now int64, final bool) {
	r := l.r
	if r.ivCh == nil {
		return
	}
	// The last interval ends with the measured window; what completes in
	// the drain is counted in Result.Drain only.
	for now >= l.nextIv && l.nextIv < r.endNs {
		l.emitInterval(l.nextIv)
	}
	if final && l.ivStart < r.endNs && (now > l.ivStart || l.st.ivRequests > 0 || l.st.ivErrors > 0) {
		end := max(now, l.ivStart+1)
		if r.pacer != nil && r.endNs != math.MaxInt64 && !r.stop.Load() {
			// An open-model run with a duration was active until its
			// scheduled end, even if the last response came earlier.
			end = r.endNs
		}
		l.emitInterval(end)
	}
}

func (l *loop) record(h *hdrhistogram.Histogram, ns int64) {
	if ns < 0 {
		ns = 0
	}
	if err := h.RecordValue((ns + 500) / 1000); err != nil {
		l.st.dropped++
	}
}

func (l *loop) countErr(class, errno string) {
	st := &l.st
	if l.r.now() >= l.r.endNs {
		// In the drain: counted in Result.Drain only.
		if class == "timeout" {
			st.drainTimeouts++
		} else {
			st.drainErrors++
		}
		return
	}
	switch class {
	case "connect":
		st.errConnect++
	case "read":
		st.errRead++
	case "write":
		st.errWrite++
	case "timeout":
		st.errTimeout++
	case "tls":
		st.errTLS++
	}
	st.ivErrors++
	st.errnos[errnoKey{class, errno}]++
}

func errnoName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		if name := unix.ErrnoName(en); name != "" {
			return name
		}
		return fmt.Sprintf("errno %d", int(en))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "ETIMEDOUT"
	}
	return err.Error()
}
