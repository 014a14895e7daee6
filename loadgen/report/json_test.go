package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
	"github.com/nettune/nettune/loadgen/report"
)

// TestReadResultJSON reads back the JSON golden file WriteJSON produced
// and writes it again: the same bytes.
func TestReadResultJSON(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "TestJSONHasEveryNumber.golden"))
	require.NoError(t, err)
	res, err := report.ReadResultJSON(bytes.NewReader(golden))
	require.NoError(t, err)
	var again bytes.Buffer
	require.NoError(t, report.WriteJSON(&again, res))
	assert.JSONEq(t, string(golden), again.String(), "read and written again, nothing lost")
	f := loadgen.FiguresOf("golden", res)
	assert.Equal(t, int64(res.Requests), f.Requests)

	bad := strings.Replace(string(golden), `"count": `, `"count": 1`, 1)
	_, err = report.ReadResultJSON(strings.NewReader(bad))
	assert.ErrorContains(t, err, "its count says")
	_, err = report.ReadResultJSON(strings.NewReader("Running 10s test"))
	assert.ErrorContains(t, err, "result JSON")
}

func FuzzReadResultJSON(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "TestJSONHasEveryNumber.golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte(`{"requests": 3, "histograms": {"latency": {"count": 0, "hdr_base64": "HISTFAAA"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := report.ReadResultJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := report.WriteJSON(&out, res); err != nil {
			t.Fatalf("read but cannot write: %v", err)
		}
		_ = loadgen.FiguresOf("x", res)
	})
}

// TestRunGeneratorUse: Run measures its process's CPU over the run
// against its CPUs, and the figures survive the JSON a worker sends.
func TestRunGeneratorUse(t *testing.T) {
	hw, err := loadgen.StartHelloWorld("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{URL: hw.URL, Connections: 4, Duration: 300 * time.Millisecond})
	require.NoError(t, err)
	g := res.Generator
	assert.Greater(t, g.CPUs, 0)
	assert.GreaterOrEqual(t, g.Wall, 300*time.Millisecond)
	assert.Greater(t, g.CPU, time.Duration(0), "a closed loop on a server in this process uses CPU")
	if _, err := os.Stat("/proc/thread-self/schedstat"); err == nil {
		// Every wake-up of the loop spends some time on a run queue.
		assert.Greater(t, g.LoopWait, time.Duration(0), "the loop's run-queue wait, from schedstat")
	}
	assert.LessOrEqual(t, g.LoopWait, g.Wall*time.Duration(res.Threads), "a loop waits at most the run")
	var b bytes.Buffer
	require.NoError(t, report.WriteJSON(&b, res))
	back, err := report.ReadResultJSON(&b)
	require.NoError(t, err)
	assert.Equal(t, g, back.Generator)
}
