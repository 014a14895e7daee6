package loadgen

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// MergeShards merges the Results of the shards of one load, run at the
// same time by several generators (Config.Shard of Config.Shards of one
// open-model schedule, or a closed loop's connections split between
// them), into one Result. Every shard's Start must be on one clock (a
// caller that ran them on other machines subtracts each machine's clock
// offset first).
//
// Nothing is averaged: the histograms are merged value by value
// (lossless), the counts are summed, and the merged window is the
// shards' common window, from the latest Start to the earliest end of
// their measured windows. Requests is the responses of the shards in that
// window, each shard's counted pro rata to its own window (an open-model
// shard spreads its responses evenly over its window), and AchievedRate
// is Requests over the common window. The histograms, Sent and the other
// counts cover each shard's whole window. Generator is the busiest
// shard's (the highest GeneratorUse.Percent), so LoadBound of the merge
// says whether any one generator limited the load; Connections, Threads
// and OfferedRate are the shards' sums.
//
// It fails when there is no shard, a shard is nil or measured nothing, the
// shards loaded different URLs, or their windows do not overlap.
func MergeShards(shards ...*Result) (*Result, error) {
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	start, common, err := commonWindow(shards)
	if err != nil {
		return nil, err
	}
	first := shards[0]
	m := &Result{
		URL: first.URL, Method: first.Method, KeepAlive: first.KeepAlive, Warmup: first.Warmup,
		DocumentLength: first.DocumentLength, Server: first.Server, OpenFiles: first.OpenFiles,
		Start: start, Elapsed: common, Histograms: newHistograms(),
		Drain: Drain{Latency: NewHistogram()},
	}
	var inWindow float64
	var pacers []string
	errnos := map[errnoKey]uint64{}
	for _, s := range shards {
		inWindow += float64(s.Requests) * common.Seconds() / s.Elapsed.Seconds()
		m.addShard(s, errnos)
		if s.Pacer != "" {
			pacers = append(pacers, s.Pacer)
		}
	}
	if len(pacers) > 0 {
		m.Pacer = fmt.Sprintf("%d shards: %s", len(shards), strings.Join(pacers, "; "))
	}
	m.Requests = uint64(math.Round(inWindow))
	m.AchievedRate = float64(m.Requests) / common.Seconds()
	m.Errors.Errnos = sortErrnos(errnos)
	return m, nil
}

// checkShards refuses no shard, a missing one, an empty window and shards
// of different URLs.
func checkShards(shards []*Result) error {
	if len(shards) == 0 {
		return errors.New("loadgen: merge shards: no result")
	}
	for i, s := range shards {
		if s == nil {
			return fmt.Errorf("loadgen: merge shards: result %d of %d is missing", i+1, len(shards))
		}
		if s.Elapsed <= 0 {
			return fmt.Errorf("loadgen: merge shards: shard %d of %d has an empty window (elapsed %s)", i+1, len(shards), s.Elapsed)
		}
		if s.URL != shards[0].URL {
			return fmt.Errorf("loadgen: merge shards: shard %d loaded %s, shard 1 %s: want shards of one load", i+1, s.URL, shards[0].URL)
		}
	}
	return nil
}

// commonWindow returns the start and the length of the window every
// shard measured in; an error when they do not overlap.
func commonWindow(shards []*Result) (time.Time, time.Duration, error) {
	first := shards[0]
	start, end := first.Start, first.Start.Add(first.Elapsed)
	for _, s := range shards[1:] {
		if s.Start.After(start) {
			start = s.Start
		}
		if e := s.Start.Add(s.Elapsed); e.Before(end) {
			end = e
		}
	}
	common := end.Sub(start)
	if common <= 0 {
		var ws []string
		for i, s := range shards {
			ws = append(ws, fmt.Sprintf("shard %d %s+%s", i+1, s.Start.Format("15:04:05.000"), s.Elapsed.Round(time.Millisecond)))
		}
		return time.Time{}, 0, fmt.Errorf("loadgen: merge shards: the measured windows do not overlap (%s): the shards did not run together", strings.Join(ws, ", "))
	}
	return start, common, nil
}

// addShard adds one shard's counts and histograms to the merge m; the
// busiest shard's Generator wins.
func (m *Result) addShard(s *Result, errnos map[errnoKey]uint64) {
	m.Connections += s.Connections
	m.Threads += s.Threads
	m.OfferedRate += s.OfferedRate
	m.Sent += s.Sent
	m.Bytes += s.Bytes
	m.BodyBytes += s.BodyBytes
	m.KeepAliveResponses += s.KeepAliveResponses
	m.LengthMismatches += s.LengthMismatches
	m.Connects += s.Connects
	m.Reconnects += s.Reconnects
	m.Incomplete += s.Incomplete
	m.Missed += s.Missed
	m.Dropped += s.Dropped
	e := s.Errors
	m.Errors.Connect += e.Connect
	m.Errors.Read += e.Read
	m.Errors.Write += e.Write
	m.Errors.Timeout += e.Timeout
	m.Errors.Status += e.Status
	m.Statuses.Add(s.Statuses)
	m.Errors.TLS += e.TLS
	for _, n := range e.Errnos {
		errnos[errnoKey{n.Class, n.Errno}] += n.Count
	}
	m.TLS.Handshakes += s.TLS.Handshakes
	m.TLS.Resumed += s.TLS.Resumed
	if m.TLS.Version == "" {
		m.TLS.Version, m.TLS.CipherSuite = s.TLS.Version, s.TLS.CipherSuite
	}
	m.Drain.Requests += s.Drain.Requests
	m.Drain.Errors += s.Drain.Errors
	m.Drain.Timeouts += s.Drain.Timeouts
	m.Drain.Elapsed = max(m.Drain.Elapsed, s.Drain.Elapsed)
	if s.Drain.Latency != nil {
		m.Dropped += m.Drain.Latency.Merge(s.Drain.Latency)
	}
	m.Dropped += m.Histograms.merge(s.Histograms.orEmpty())
	m.RateSamples = append(m.RateSamples, s.RateSamples...)
	if s.Generator.Percent() > m.Generator.Percent() || m.Generator.CPUs == 0 {
		m.Generator = s.Generator
	}
}

// orEmpty returns h with an empty histogram for each one that is nil (a
// Result read back without some of them).
func (h Histograms) orEmpty() Histograms {
	for _, p := range []**hdrhistogram.Histogram{&h.Latency, &h.Service, &h.Lag, &h.OwnLag, &h.Connect, &h.Processing, &h.Waiting} {
		if *p == nil {
			*p = NewHistogram()
		}
	}
	return h
}
