package loadgen

import (
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram ranges: every histogram holds microseconds from 1 µs to one
// day with 3 significant digits, as wrk2's, so the percentile spectrum
// footer reads "Buckets 27, SubBuckets 2048" as wrk2's does.
const (
	histLowest  = 1                      // µs
	histHighest = 24 * 60 * 60 * 1000000 // µs: one day
	histSigFigs = 3                      // significant decimal digits
)

// NewHistogram returns an empty histogram with the package's range (µs).
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

// Errors counts failed requests by class, as wrk prints them, plus the
// errno behind each failure.
type Errors struct {
	Connect uint64 `json:"connect"` // connect(2) failed or timed out
	Read    uint64 `json:"read"`    // read failed, the server reset or closed mid-response, or the response was malformed
	Write   uint64 `json:"write"`   // write failed
	Timeout uint64 `json:"timeout"` // no complete response within Config.Timeout
	Status  uint64 `json:"status"`  // responses with a status outside Config.OKStatus (default 200-399)
	// TLS counts failed TLS handshakes (certificate rejected, alert,
	// timeout, connection closed during the handshake).
	TLS uint64 `json:"tls"`
	// Errnos breaks the socket errors down by errno ("ECONNREFUSED",
	// "EMFILE", "EADDRNOTAVAIL", "ECONNRESET", "ETIMEDOUT", "EOF",
	// "EPROTO" for a malformed response), most frequent first.
	Errnos []ErrnoCount `json:"errnos"`
}

// Socket returns the number of socket errors (all but Status).
func (e Errors) Socket() uint64 { return e.Connect + e.Read + e.Write + e.Timeout + e.TLS }

// ErrnoCount is how often one errno caused one class of error.
type ErrnoCount struct {
	Class string `json:"class"` // "connect", "read", "write", "timeout" or "tls"
	Errno string `json:"errno"` // e.g. "ECONNREFUSED"
	Count uint64 `json:"count"`
}

// Histograms are a run's latency histograms, in microseconds. They are
// merged from one histogram per event loop.
type Histograms struct {
	// Latency is the corrected latency: completion minus the intended
	// send time (wrk2's "Recorded Latency"). In a closed loop the intended
	// time is the actual send time (or the connect start without
	// keep-alive).
	Latency *hdrhistogram.Histogram
	// Service is completion minus the actual send time: the service time,
	// wrk2's -U "Uncorrected Latency".
	Service *hdrhistogram.Histogram
	// Lag is the actual send time minus the intended one: how late the
	// generator itself was. A large lag with a small Service means the
	// generator, not the server, was the bottleneck.
	Lag *hdrhistogram.Histogram
	// OwnLag is the generator's own part of Lag: the actual send time
	// minus the later of the intended time and the moment the connection
	// was free to send (its previous response ended, or its connect
	// completed). Lag beyond OwnLag is a connection still waiting for the
	// server when its next request fell due, which an open model with a
	// fixed number of connections cannot avoid; OwnLag is what the
	// generator's timers, send window and scheduling added. Recorded in
	// an open model only, like Lag.
	OwnLag *hdrhistogram.Histogram
	// Connect is the connect time of each connection opened during the
	// measured run (ab's "Connect"; 0 for a reused keep-alive connection).
	Connect *hdrhistogram.Histogram
	// Processing is completion minus the later of connect completion and
	// the send (ab's "Processing").
	Processing *hdrhistogram.Histogram
	// Waiting is the first response byte minus the send (ab's "Waiting").
	Waiting *hdrhistogram.Histogram
}

func newHistograms() Histograms {
	return Histograms{
		Latency: NewHistogram(), Service: NewHistogram(), Lag: NewHistogram(), OwnLag: NewHistogram(),
		Connect: NewHistogram(), Processing: NewHistogram(), Waiting: NewHistogram(),
	}
}

func (h Histograms) merge(o Histograms) (dropped int64) {
	dropped += h.Latency.Merge(o.Latency)
	dropped += h.Service.Merge(o.Service)
	dropped += h.Lag.Merge(o.Lag)
	if h.OwnLag != nil && o.OwnLag != nil {
		dropped += h.OwnLag.Merge(o.OwnLag)
	}
	dropped += h.Connect.Merge(o.Connect)
	dropped += h.Processing.Merge(o.Processing)
	dropped += h.Waiting.Merge(o.Waiting)
	return dropped
}

// Result is everything one run measured. Counts and histograms cover the
// measured part only (after Warmup).
type Result struct {
	URL         string
	Method      string
	Connections int
	Threads     int  // event loops actually used
	KeepAlive   bool // false: a new connection per request
	// Pacer describes the open-model schedule; empty for a closed loop.
	Pacer string
	// OfferedRate is the requests per second the pacer asked for over the
	// measured part (0 for a closed loop); AchievedRate is Requests over
	// Elapsed.
	OfferedRate, AchievedRate float64
	Start                     time.Time // when the measured part began
	// Elapsed is the measured window: Config.Duration once the run
	// reached its end, less if a request count or a cancelled context
	// ended it first. It never includes the drain.
	Elapsed time.Duration
	Warmup  time.Duration

	Requests uint64 // responses completed in the measured window
	Sent     uint64 // requests sent in the measured window
	Bytes    uint64 // bytes read (headers and bodies)
	// BodyBytes is the body bytes read (ab's "HTML transferred").
	BodyBytes uint64
	// KeepAliveResponses counts responses after which the connection
	// stayed open (ab's "Keep-Alive requests").
	KeepAliveResponses uint64
	// LengthMismatches counts responses whose body length differed from
	// the first one (ab counts them as failed "Length" requests).
	LengthMismatches uint64
	// DocumentLength is the body length of the first response, and Server
	// its Server header (ab's "Document Length", "Server Software").
	DocumentLength int64
	Server         string

	Errors Errors
	// Statuses counts the measured responses by status class, errors
	// (outside OKStatus) or not.
	Statuses StatusClasses
	// OKStatus is Config.OKStatus in its text form ("2xx,3xx").
	OKStatus string
	// Targets has one entry per Config.Targets entry, in order, when the
	// run had more than one; nil otherwise.
	Targets    []TargetResult
	Connects   uint64 // successful connects
	Reconnects uint64 // connections the server closed and Run reopened
	// Incomplete counts requests still in flight when the run ended
	// (after the drain, or at once with Config.NoDrain).
	Incomplete uint64
	// TLS describes the handshakes of an https run; zero for http.
	TLS TLSStats
	// Drain is what became of the requests in flight at the end of the
	// measured window.
	Drain Drain
	// Missed counts open-model requests whose intended time fell inside
	// the run but that were never sent because their connection was still
	// busy: a sign the connections, not the server, limited the load.
	Missed uint64
	// Dropped counts values outside the histograms' range (over a day) and
	// values lost merging; never silently discarded.
	Dropped int64

	Histograms Histograms
	// RateSamples are per-event-loop requests per second over 100 ms
	// windows: what wrk's "Req/Sec" thread statistics summarise.
	RateSamples []float64

	// OpenFiles is the RLIMIT_NOFILE soft limit before and after Run raised
	// it.
	OpenFiles RlimitChange

	// Generator is the CPU the generator's process used during the run,
	// against the CPUs it may use (LoadBound reads it).
	Generator GeneratorUse
}

// TargetResult is what one of several targets measured, over the measured
// window as Result's counts.
type TargetResult struct {
	Method, URL string // the target's, as in Config.Targets (Method "GET" when empty)
	Requests    uint64 // responses completed
	// Errors counts its responses outside Config.OKStatus and its sent
	// requests that failed (read, write, timeout).
	Errors   uint64
	Statuses StatusClasses
	// Latency is the corrected latency (µs) of its responses, with 2
	// significant digits (a histogram per target and event loop).
	Latency *hdrhistogram.Histogram
}

// TargetHistSigFigs is the precision of TargetResult.Latency: 2
// significant digits keep a target's histogram at about 32 KB.
const TargetHistSigFigs = 2

func newTargetHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, TargetHistSigFigs)
}

// Drain counts the requests sent in the measured window that were still in
// flight at its end, by what became of them in the drain that follows (at
// most Config.Timeout long). None of them is in Result.Requests, Errors,
// Histograms or the interval snapshots.
type Drain struct {
	Requests uint64 // completed responses
	// Errors counts those that failed (socket errors or a status outside
	// Config.OKStatus) and Timeouts those that timed out.
	Errors   uint64
	Timeouts uint64
	Elapsed  time.Duration // from the window's end to the last of them
	// Latency is the corrected latency (µs) of the completed ones.
	Latency *hdrhistogram.Histogram
}

// TLSStats counts an https run's TLS handshakes, set-up included.
type TLSStats struct {
	Handshakes uint64 `json:"handshakes"` // completed handshakes
	// Resumed counts the handshakes that resumed an earlier session (a
	// reconnect) instead of a full key exchange and certificate check.
	Resumed uint64 `json:"resumed"`
	// Version is the negotiated protocol ("TLS 1.3") and CipherSuite the
	// cipher suite of the first handshake.
	Version     string `json:"version"`
	CipherSuite string `json:"cipher_suite"`
}

// RlimitChange records a change of RLIMIT_NOFILE.
type RlimitChange struct {
	Before uint64 `json:"before"`
	After  uint64 `json:"after"`
	Max    uint64 `json:"max"`
}

// Snapshot is one interval of a running test, passed to Config.OnInterval.
type Snapshot struct {
	Index      int           // 0, 1, ...
	Start, End time.Duration // offsets from the start of the measured run
	// RunStart is when the measured run began (after the warm-up), so
	// RunStart.Add(Start) is the interval's wall-clock start.
	RunStart time.Time
	Requests uint64 // completed in the interval
	Errors   uint64 // socket and status errors in the interval
	Bytes    uint64
	// Latency and Service are the interval's corrected and uncorrected
	// histograms (what an HdrHistogram interval log records).
	Latency, Service *hdrhistogram.Histogram
	// Lag is the interval's histogram of how late requests were sent,
	// by send time; nil in a closed loop, which has no schedule.
	Lag *hdrhistogram.Histogram
	// Cumulative is the corrected histogram of the whole run so far.
	Cumulative *hdrhistogram.Histogram
	// TotalRequests and TotalErrors count the run so far.
	TotalRequests, TotalErrors uint64
}

func sortErrnos(m map[errnoKey]uint64) []ErrnoCount {
	out := make([]ErrnoCount, 0, len(m))
	for k, n := range m {
		out = append(out, ErrnoCount{Class: k.class, Errno: k.errno, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Class != out[j].Class {
			return out[i].Class < out[j].Class
		}
		return out[i].Errno < out[j].Errno
	})
	return out
}

type errnoKey struct{ class, errno string }

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
