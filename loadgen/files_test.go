package loadgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/loadgen"
)

// TestReadResultJSON reads back the JSON golden file WriteJSON produced
// and writes it again: the same bytes.
func TestReadResultJSON(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "TestJSONHasEveryNumber.golden"))
	require.NoError(t, err)
	res, err := loadgen.ReadResultJSON(bytes.NewReader(golden))
	require.NoError(t, err)
	var again bytes.Buffer
	require.NoError(t, loadgen.WriteJSON(&again, res))
	assert.JSONEq(t, string(golden), again.String(), "read and written again, nothing lost")
	f := loadgen.FiguresOf("golden", res)
	assert.Equal(t, int64(res.Requests), f.Requests)

	bad := strings.Replace(string(golden), `"count": `, `"count": 1`, 1)
	_, err = loadgen.ReadResultJSON(strings.NewReader(bad))
	assert.ErrorContains(t, err, "its count says")
	_, err = loadgen.ReadResultJSON(strings.NewReader("Running 10s test"))
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
		res, err := loadgen.ReadResultJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := loadgen.WriteJSON(&out, res); err != nil {
			t.Fatalf("read but cannot write: %v", err)
		}
		_ = loadgen.FiguresOf("x", res)
	})
}
