//go:build linux

package study

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// widest returns the longest line of s, in runes, and the line.
func widest(s string) (int, string) {
	n, line := 0, ""
	for _, l := range strings.Split(s, "\n") {
		if w := utf8.RuneCountInString(l); w > n {
			n, line = w, l
		}
	}
	return n, line
}

// TestStepTableFits: the step table of a whole study (seven steps, a
// search, a load-bound step, a failed and a skipped one, the guide's
// 6-digit capacities) and the lines under it fit TableWidth columns, with
// one "vs baseline" and one "vs previous" column and one percent format;
// -wide keeps every column loadgen's table has.
func TestStepTableFits(t *testing.T) {
	res := realisticResults(t)
	o := DefaultOptions()
	o.Apply, o.Connections = true, 1728
	out := FormatResults(res.Steps) + StepTable(o, res, false)
	t.Logf("\n%s", out)
	n, line := widest(out)
	assert.LessOrEqual(t, n, TableWidth, "widest line: %q", line)

	table := StepTable(o, res, false)
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	assert.Equal(t, []string{"step", "capacity", "min-max", "vs", "baseline", "vs", "previous", "Arm", "guide", "p99", "errors"}, header)
	assert.Regexp(t, `(?m)^baseline\s+244000\s+239\.1-248\.9k\s+12\.0ms\s+0$`, table)
	assert.Regexp(t, `(?m)^access-log\s+272000\s+266\.6-277\.4k\s+\+11\.5 % unsettled\s+\+11\.5 % unsettled\s+\+11\.1 %\s+9\.00ms\s+12$`, table)
	assert.Regexp(t, `(?m)^threads\s+358000\s+\S+\s+\+46\.7 % unsettled\s+\+31\.6 % gain\s+\+31\.7 %\s+4\.00ms\s+0$`, table)
	assert.Regexp(t, `(?m)^threads maxThreads=7 \(the guide's rule, measured best of 3\)$`, table, "the setting kept, under the table")
	assert.Contains(t, table, "nic-queues: load-bound: client CPU 97 % of 2 cores")
	assert.Contains(t, table, "every step: load sized to 1728 connections, not confirmed saturated")
	assert.Contains(t, table, "unsettled: baseline (the warm-up ended before the JVM settled;")
	assert.Contains(t, table, "drift: measured again, ")
	assert.Contains(t, table, "why access-log: system CPU −39 % per request (11 → 6.9 µs of 33 → 29)\n", "each measured step's reason")
	assert.NotContains(t, table, "why baseline")
	assert.NotRegexp(t, `\d%`, table, "one percent format: a space before every %")
	assert.NotContains(t, table, "numa-local", "only measured steps have a row")
	assert.Regexp(t, `(?m)^numa-local\s+failed\s+restart Tomcat: `, out, "the failed step in the step list")

	wide := StepTable(o, res, true)
	cmp := res.Comparison()
	assert.True(t, strings.HasPrefix(wide, cmp.Text()), "-wide: loadgen's table as it is")
	wideHeader := strings.SplitN(wide, "\n", 2)[0]
	for _, col := range []string{"step", "capacity", "min-max", "runs", "vs base", "vs prev", "Arm guide vs prev", "at req/s", "p50", "p99", "max", "errors", "CPU%"} {
		assert.Contains(t, wideHeader, col)
	}
	assert.Equal(t, 2, strings.Count(wideHeader, "vs base "), "the capacity's and p99's")
	assert.Contains(t, wide, "threads maxThreads=7 (the guide's rule, measured best of 3)  ", "the setting in the row")
	assert.Regexp(t, `\+46\.7 % \[\+\d+\.\d, \+\d+\.\d\] p=0\.002 \(unsettled\)`, wide, "each uplift's interval and p")
	assert.NotRegexp(t, `\d%`, strings.ReplaceAll(wide, "CPU%", ""), "one percent format in -wide too")
	wn, _ := widest(wide)
	t.Logf("widest line: %d runes; -wide: %d", n, wn)
	require.Greater(t, wn, TableWidth, "-wide is wide")
}

// TestStepTableUserStep: a user's step with a long name keeps the table
// within TableWidth: its row shows its kind and number, and the line
// under the table names it in full.
func TestStepTableUserStep(t *testing.T) {
	res := realisticResults(t)
	long := "sysctl:net.ipv4.tcp_rmem=4096 87380 6291456"
	res.Measured[len(res.Measured)-1].Name = long
	o := DefaultOptions()
	o.Apply = true
	table := StepTable(o, res, false)
	t.Logf("\n%s", table)
	n, line := widest(table)
	assert.LessOrEqual(t, n, TableWidth, "widest line: %q", line)
	assert.Regexp(t, `(?m)^sysctl 1\s+379000\s`, table)
	assert.Contains(t, table, "sysctl 1 is "+long+"\n")
}

// TestWrap: a long line breaks at spaces, the rest indented; short lines
// and an indent are kept.
func TestWrap(t *testing.T) {
	assert.Equal(t, "short\n", Wrap("short\n", 10))
	assert.Equal(t, "aaa bbb\n  ccc ddd\n  eee\n", Wrap("aaa bbb ccc ddd eee\n", 9))
	assert.Equal(t, "  aaa bbb\n    ccc\n", Wrap("  aaa bbb ccc\n", 9))
	assert.Equal(t, "abcdefghijkl\n  x\n", Wrap("abcdefghijkl x\n", 5), "a long word stays whole")
	assert.Equal(t, "a\n\nb", Wrap("a\n\nb", 5))
}
