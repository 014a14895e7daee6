//go:build linux

package remoteload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// TestShards: an open-model load runs shard i of n on client i, a closed
// loop splits its connections; each client's start is the shared one on
// its own clock.
func TestShards(t *testing.T) {
	start := time.Date(2026, 12, 3, 23, 30, 0, 0, time.UTC)
	clocks := []ClockOffset{{Offset: 0}, {Offset: 250 * time.Millisecond}, {Offset: -2 * time.Second}}
	tests := []struct {
		name        string
		cfg         loadgen.Config
		shards      []int // Shards of each (0: none)
		connections []int
		requests    []int64
		wantErr     string
	}{
		{name: "open model: one schedule, three shards", cfg: loadgen.Config{URL: "http://a/", Rate: 3000, Connections: 8},
			shards: []int{3, 3, 3}, connections: []int{8, 8, 8}, requests: []int64{0, 0, 0}},
		{name: "closed loop: the connections split", cfg: loadgen.Config{URL: "http://a/", Connections: 8, Requests: 10},
			shards: []int{0, 0, 0}, connections: []int{3, 3, 2}, requests: []int64{4, 3, 3}},
		{name: "closed loop: fewer connections than clients", cfg: loadgen.Config{URL: "http://a/", Connections: 2},
			wantErr: "a closed-loop load on 2 connections cannot be split among 3 clients"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfgs, err := Shards(tt.cfg, 3, start, clocks)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, cfgs, 3)
			for i, c := range cfgs {
				assert.Equal(t, tt.shards[i], c.Shards, "client %d", i)
				if c.Shards > 0 {
					assert.Equal(t, i, c.Shard)
				}
				assert.Equal(t, tt.connections[i], c.Connections, "client %d", i)
				assert.Equal(t, tt.requests[i], c.Requests, "client %d", i)
				assert.Equal(t, start.Add(clocks[i].Offset), c.StartAt, "client %d starts at the shared time on its clock", i)
				assert.Equal(t, tt.cfg.Rate, c.Rate, "the whole schedule's rate: Shard takes every n-th request")
			}
		})
	}
	_, err := Shards(loadgen.Config{Rate: 1}, 2, start, clocks)
	assert.ErrorContains(t, err, "2 clients, 3 clock offsets")
}

func TestClockOffsetString(t *testing.T) {
	assert.Equal(t, "+1.20ms ± 300us", ClockOffset{Offset: 1200 * time.Microsecond, Uncertainty: 300 * time.Microsecond}.String())
	assert.Equal(t, "-2.00s ± 1.00ms", ClockOffset{Offset: -2 * time.Second, Uncertainty: time.Millisecond}.String())
}

// TestLeadAndStartPassed: the shared start is three times the slowest
// session set-up ahead (at least minLead), and a worker's refusal of a
// start that passed is told apart from other failures.
func TestLeadAndStartPassed(t *testing.T) {
	cs := &Clients{Clocks: []ClockOffset{{Setup: 200 * time.Millisecond}, {Setup: 900 * time.Millisecond}}}
	assert.Equal(t, 2700*time.Millisecond, cs.Lead())
	cs.late = 6 * time.Second
	assert.Equal(t, 6*time.Second, cs.Lead(), "a lead that proved too short is not used again")
	assert.Equal(t, minLead, (&Clients{}).Lead())
	// As the worker on the client reports it (RunWorker via loadgen's check).
	err := errors.New("load of http://10.213.13.1:1/ in client root@10.213.14.2 (ssh) (ssh …): exit status 1: tomcat-tuning load-worker: " +
		"loadgen: start time 2026-12-03T23:28:36.487398577Z passed 9ms ago: give a later one")
	assert.True(t, startPassed(err))
	assert.False(t, startPassed(errors.New("exit status 255: Connection refused")))
	assert.False(t, startPassed(nil))
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		line string
		want time.Time
		ok   bool
	}{
		{"1764804000.123456\n", time.Unix(1764804000, 123456000), true},    // bash $EPOCHREALTIME
		{"1764804000,000001", time.Unix(1764804000, 1000), true},           // a locale's decimal comma
		{"1764804000123456789\n", time.Unix(0, 1764804000123456789), true}, // GNU date +%s%N
		{"1764804000.12", time.Time{}, false},                              // not microseconds
		{"%N", time.Time{}, false},                                         // a date without %N
		{"", time.Time{}, false},
		{"-5", time.Time{}, false},
		{"-5.000001", time.Time{}, false}, // no sign
		{"5.+12345", time.Time{}, false},
		{"+1764804000123456789", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := parseClock(tt.line)
		if !tt.ok {
			assert.ErrorContains(t, err, "want seconds.microseconds", "%q", tt.line)
			continue
		}
		require.NoError(t, err, "%q", tt.line)
		assert.True(t, tt.want.Equal(got), "%q: %s", tt.line, got)
	}
}

// FuzzParseClock: any line parses or is refused with the expected form
// named; what parses prints back as it was read (seconds and six digits of
// microseconds, or nanoseconds).
func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"1764804000.123456\n", "1764804000,000001", "1764804000123456789", "1764804000.12", "%N", "", "-5", "5.+12345"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, err := parseClock(line)
		if err != nil {
			require.ErrorContains(t, err, "want seconds.microseconds")
			return
		}
		in := strings.Replace(strings.TrimSpace(line), ",", ".", 1)
		var back string
		if strings.Contains(in, ".") {
			back = fmt.Sprintf("%d.%06d", got.Unix(), got.Nanosecond()/1000)
		} else {
			back = strconv.FormatInt(got.UnixNano(), 10)
		}
		assert.Equal(t, strings.TrimLeft(in, "0"), strings.TrimLeft(back, "0"), "%q", line)
	})
}
