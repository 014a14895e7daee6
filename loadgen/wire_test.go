package loadgen_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nettune/nettune/loadgen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notSendable are the Config fields that cannot cross a process boundary:
// WriteConfigJSON refuses a Config that sets them.
var notSendable = map[string]bool{"Pacer": true, "OnInterval": true}

// filled returns a Config whose every sendable field holds a value that is
// not its zero value, set by reflection, so a field added to Config is set
// here without anyone remembering to.
func filled(t *testing.T) loadgen.Config {
	var c loadgen.Config
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		if notSendable[name] {
			continue
		}
		switch {
		case f.Type() == reflect.TypeOf(time.Duration(0)):
			f.SetInt(int64(time.Duration(i+1) * 1500 * time.Microsecond))
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(time.Date(2026, 12, 3, 18, 0, 0, 123456789, time.UTC)))
		case f.Type() == reflect.TypeOf([]loadgen.Header{}):
			f.Set(reflect.ValueOf([]loadgen.Header{{Name: "X-Step", Value: "threads"}}))
		case f.Type() == reflect.TypeOf([]loadgen.Target{}):
			f.Set(reflect.ValueOf([]loadgen.Target{{Method: "POST", URL: "/orders", Headers: []loadgen.Header{{Name: "X-A", Value: "1"}}, Body: []byte("{}")}}))
		case f.Type() == reflect.TypeOf(loadgen.StatusSet{}):
			ok, err := loadgen.ParseStatusSet("200,204,3xx")
			require.NoError(t, err)
			f.Set(reflect.ValueOf(ok))
		case f.Kind() == reflect.String:
			f.SetString("value-of-" + name)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(i + 2))
		case f.Kind() == reflect.Float64:
			f.SetFloat(float64(i) + 0.5)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			f.SetBytes([]byte("body of " + name))
		default:
			t.Fatalf("Config.%s (%s): teach this test a non-zero value of its type", name, f.Type())
		}
	}
	return c
}

// TestConfigJSONCarriesEveryField fails when a Config field is neither
// carried by the wire form nor listed as not sendable.
func TestConfigJSONCarriesEveryField(t *testing.T) {
	want := filled(t)
	var buf bytes.Buffer
	require.NoError(t, loadgen.WriteConfigJSON(&buf, want))
	got, err := loadgen.ReadConfigJSON(&buf)
	require.NoError(t, err)
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < wv.NumField(); i++ {
		name := wv.Type().Field(i).Name
		if notSendable[name] {
			continue
		}
		assert.True(t, reflect.DeepEqual(wv.Field(i).Interface(), gv.Field(i).Interface()),
			"Config.%s is lost on the wire: sent %v, got %v", name, wv.Field(i).Interface(), gv.Field(i).Interface())
	}
	for name := range notSendable {
		_, ok := wv.Type().FieldByName(name)
		assert.True(t, ok, "notSendable lists %s, which Config no longer has", name)
	}
}

func TestConfigJSONRefuses(t *testing.T) {
	var buf bytes.Buffer
	err := loadgen.WriteConfigJSON(&buf, loadgen.Config{URL: "http://127.0.0.1/", Pacer: loadgen.Constant(10)})
	assert.ErrorContains(t, err, "Pacer")
	err = loadgen.WriteConfigJSON(&buf, loadgen.Config{URL: "http://127.0.0.1/", OnInterval: func(loadgen.Snapshot) {}})
	assert.ErrorContains(t, err, "OnInterval")
	assert.Zero(t, buf.Len(), "nothing written for a refused Config")

	_, err = loadgen.ReadConfigJSON(strings.NewReader(`{"url":"http://x/","pacer":"ramp"}`))
	assert.ErrorContains(t, err, `unknown field "pacer"`)
	_, err = loadgen.ReadConfigJSON(strings.NewReader(`not json`))
	assert.ErrorContains(t, err, "read a load Config")
}

// FuzzReadConfigJSON: any input either fails with loadgen's message, or
// reads to a Config that writes and reads back the same.
func FuzzReadConfigJSON(f *testing.F) {
	f.Add(`{"url":"http://127.0.0.1:8080/","connections":64,"rate":2000,"duration_ns":5000000000}`)
	f.Add(`{"url":"https://h/","insecure":true,"no_drain":true,"headers":[{"Name":"X","Value":"y"}],"body":"YQ=="}`)
	f.Add(`{"url":"x","start_at":"2026-12-03T18:00:00Z","shard":1,"shards":3}`)
	f.Add(`{}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := loadgen.ReadConfigJSON(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "loadgen: ") {
				t.Fatalf("error %q does not name the package", err)
			}
			return
		}
		var b bytes.Buffer
		if err := loadgen.WriteConfigJSON(&b, c); err != nil {
			t.Fatalf("write what was read: %v", err)
		}
		again, err := loadgen.ReadConfigJSON(&b)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if !reflect.DeepEqual(normal(c), normal(again)) {
			t.Fatalf("round trip: %+v != %+v", c, again)
		}
	})
}

// normal makes empty and nil slices, and equal instants, compare equal.
func normal(c loadgen.Config) loadgen.Config {
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	if len(c.Body) == 0 {
		c.Body = nil
	}
	if !c.StartAt.IsZero() {
		c.StartAt = c.StartAt.UTC()
	}
	return c
}
