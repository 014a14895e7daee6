package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// configJSON is the one wire form of a Config, for a load run in another
// process (a worker in another network namespace, or on a client machine
// over ssh): every field but Pacer (a schedule object) and OnInterval (a
// callback), which cannot cross a process boundary. A field added to Config
// must be carried here; TestConfigJSONCarriesEveryField fails until it is.
type configJSON struct {
	URL              string        `json:"url"`
	Insecure         bool          `json:"insecure,omitempty"`
	Method           string        `json:"method,omitempty"`
	Headers          []Header      `json:"headers,omitempty"`
	Body             []byte        `json:"body,omitempty"`
	Targets          []targetJSON  `json:"targets,omitempty"`
	OKStatus         StatusSet     `json:"ok_status,omitzero"`
	Connections      int           `json:"connections,omitempty"`
	Threads          int           `json:"threads,omitempty"`
	Rate             float64       `json:"rate,omitempty"`
	Shard            int           `json:"shard,omitempty"`
	Shards           int           `json:"shards,omitempty"`
	StartAt          time.Time     `json:"start_at,omitzero"`
	Slack            time.Duration `json:"slack_ns,omitempty"`
	Duration         time.Duration `json:"duration_ns,omitempty"`
	NoDrain          bool          `json:"no_drain,omitempty"`
	Requests         int64         `json:"requests,omitempty"`
	Warmup           time.Duration `json:"warmup_ns,omitempty"`
	DisableKeepAlive bool          `json:"disable_keep_alive,omitempty"`
	Timeout          time.Duration `json:"timeout_ns,omitempty"`
	Interval         time.Duration `json:"interval_ns,omitempty"`
}

// targetJSON is a Target on the wire.
type targetJSON struct {
	Method  string   `json:"method,omitempty"`
	URL     string   `json:"url"`
	Headers []Header `json:"headers,omitempty"`
	Body    []byte   `json:"body,omitempty"`
}

// WriteConfigJSON writes cfg as one JSON object, the form ReadConfigJSON
// reads: how a tool hands a load to a worker process. A Config with a
// Pacer or an OnInterval cannot be sent and is an error (use Rate).
func WriteConfigJSON(w io.Writer, cfg Config) error {
	if cfg.Pacer != nil {
		return fmt.Errorf("loadgen: a Config with a Pacer (%s) cannot be sent to another process: use Rate", cfg.Pacer)
	}
	if cfg.OnInterval != nil {
		return errors.New("loadgen: a Config with OnInterval cannot be sent to another process")
	}
	return json.NewEncoder(w).Encode(configJSON{
		URL: cfg.URL, Insecure: cfg.Insecure, Method: cfg.Method, Headers: cfg.Headers, Body: cfg.Body,
		Targets: targetsToJSON(cfg.Targets), OKStatus: cfg.OKStatus,
		Connections: cfg.Connections, Threads: cfg.Threads, Rate: cfg.Rate,
		Shard: cfg.Shard, Shards: cfg.Shards, StartAt: cfg.StartAt, Slack: cfg.Slack,
		Duration: cfg.Duration, NoDrain: cfg.NoDrain, Requests: cfg.Requests, Warmup: cfg.Warmup,
		DisableKeepAlive: cfg.DisableKeepAlive, Timeout: cfg.Timeout, Interval: cfg.Interval,
	})
}

// ReadConfigJSON reads one Config that WriteConfigJSON wrote. An unknown
// field is an error (a newer sender than this reader), not dropped.
func ReadConfigJSON(r io.Reader) (Config, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var c configJSON
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("loadgen: read a load Config (JSON): %w", err)
	}
	return Config{
		URL: c.URL, Insecure: c.Insecure, Method: c.Method, Headers: c.Headers, Body: c.Body,
		Targets: targetsFromJSON(c.Targets), OKStatus: c.OKStatus,
		Connections: c.Connections, Threads: c.Threads, Rate: c.Rate,
		Shard: c.Shard, Shards: c.Shards, StartAt: c.StartAt, Slack: c.Slack,
		Duration: c.Duration, NoDrain: c.NoDrain, Requests: c.Requests, Warmup: c.Warmup,
		DisableKeepAlive: c.DisableKeepAlive, Timeout: c.Timeout, Interval: c.Interval,
	}, nil
}

func targetsToJSON(ts []Target) []targetJSON {
	var out []targetJSON
	for _, t := range ts {
		out = append(out, targetJSON(t))
	}
	return out
}

func targetsFromJSON(ts []targetJSON) []Target {
	var out []Target
	for _, t := range ts {
		out = append(out, Target(t))
	}
	return out
}
