package tuning_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nettune/nettune/tuning"
)

// A plan of one file step, run with a journal and reverted at the end.
func ExampleRunner() {
	dir, _ := os.MkdirTemp("", "nettune-example")
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "server.xml")
	os.WriteFile(conf, []byte("<Connector port=\"8080\"\n           maxThreads=\"200\" />\n"), 0o644)

	journal, err := tuning.CreateJournal(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer journal.Close()
	threads := tuning.Step{Name: "threads", Title: "maxThreads = CPUs - 1", Prepare: func(context.Context) (*tuning.Change, error) {
		return tuning.FileChange(conf, func(old []byte) ([]byte, error) {
			return []byte(strings.Replace(string(old), `"200"`, `"7"`, 1)), nil
		})
	}}
	r := &tuning.Runner{
		Journal:   journal,
		Reverters: tuning.NewDefault().Reverters(), // reverts FileChange's records
		AfterStep: func(_ context.Context, s tuning.StepResult) error {
			b, _ := os.ReadFile(conf)
			fmt.Printf("measure after %s: %q\n", s.Name, strings.Fields(string(b))[2])
			return nil
		},
	}
	results, err := r.Run(context.Background(), []tuning.Step{threads})
	fmt.Println(err, results[0].Status)
	b, _ := os.ReadFile(conf)
	fmt.Println(strings.Fields(string(b))[2])
	// Output:
	// measure after baseline: "maxThreads=\"200\""
	// measure after threads: "maxThreads=\"7\""
	// <nil> reverted
	// maxThreads="200"
}
