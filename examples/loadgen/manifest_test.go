//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manifestDoc is one YAML document of the Kubernetes manifests, read by
// walkManifest: scalars and lists of scalars by dotted path, "-" standing
// for an item of a list of mappings.
type manifestDoc struct {
	scalars map[string]string
	lists   map[string][]string
}

// walkManifest reads the block-style YAML the manifests are written in
// (mappings, lists, quoted or plain scalars, comments) and rejects what
// would make Kubernetes read it otherwise: tabs, odd indentation, a line
// that is neither "key:", "key: value" nor "- item". It is not a YAML
// parser; it checks these two files' shape, and the test below checks
// what they say, without a YAML dependency for one test.
func walkManifest(t *testing.T, path string) []manifestDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	type frame struct {
		indent int
		key    string
	}
	var docs []manifestDoc
	doc := manifestDoc{scalars: map[string]string{}, lists: map[string][]string{}}
	var stack []frame
	pathOf := func(key string) string {
		var p []string
		for _, f := range stack {
			p = append(p, f.key)
		}
		return strings.Join(append(p, key), ".")
	}
	pop := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
	}
	for n, line := range strings.Split(string(b), "\n") {
		where := fmt.Sprintf("%s:%d", path, n+1)
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		require.NotContains(t, line, "\t", where)
		if trimmed == "---" {
			docs = append(docs, doc)
			doc = manifestDoc{scalars: map[string]string{}, lists: map[string][]string{}}
			stack = nil
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		require.Zero(t, indent%2, "%s: indentation of %d spaces", where, indent)
		text := trimmed
		if strings.HasPrefix(text, "- ") {
			pop(indent)
			item := text[2:]
			if k, _, ok := strings.Cut(item, ":"); !ok || strings.ContainsAny(k, " \"$") {
				p := strings.TrimSuffix(pathOf(""), ".")
				doc.lists[p] = append(doc.lists[p], unquote(t, where, item))
				continue
			}
			stack = append(stack, frame{indent, "-"})
			indent += 2
			text = item
		}
		key, value, ok := strings.Cut(text, ":")
		require.True(t, ok, "%s: want key: value, got %q", where, text)
		require.NotContains(t, key, " ", where)
		pop(indent)
		value = strings.TrimSpace(value)
		if value == "" {
			stack = append(stack, frame{indent, key})
			continue
		}
		doc.scalars[pathOf(key)] = unquote(t, where, value)
	}
	return append(docs, doc)
}

func unquote(t *testing.T, where, v string) string {
	if strings.HasPrefix(v, `"`) {
		s, err := strconv.Unquote(v)
		require.NoError(t, err, where)
		return s
	}
	require.False(t, strings.ContainsAny(v, `"'{}[]&*!|>%@`+"`"), "%s: plain scalar %q needs quotes", where, v)
	return v
}

// TestIndexedJobManifest checks the Indexed Job is one coherent load: n
// completions run n at once, each pod's arguments (with the index and start
// time Kubernetes and envsubst put in) are accepted by this program's own
// parser as shard i of n of the same rate, and the merge Job reads every
// shard's log from the same volume. It was not run on a cluster.
func TestIndexedJobManifest(t *testing.T) {
	dir := filepath.Join("..", "k8s")
	docs := walkManifest(t, filepath.Join(dir, "loadgen-indexed-job.yaml"))
	require.Len(t, docs, 2)
	pvc, job := docs[0], docs[1]
	assert.Equal(t, "PersistentVolumeClaim", pvc.scalars["kind"])
	assert.Equal(t, "Job", job.scalars["kind"])
	assert.Equal(t, "batch/v1", job.scalars["apiVersion"])
	assert.Equal(t, "Indexed", job.scalars["spec.completionMode"])
	n, err := strconv.Atoi(job.scalars["spec.completions"])
	require.NoError(t, err)
	assert.Equal(t, job.scalars["spec.completions"], job.scalars["spec.parallelism"], "all shards run at once")
	assert.Equal(t, "Never", job.scalars["spec.template.spec.restartPolicy"])
	claim := job.scalars["spec.template.spec.volumes.-.persistentVolumeClaim.claimName"]
	assert.Equal(t, pvc.scalars["metadata.name"], claim)
	mount := job.scalars["spec.template.spec.containers.-.volumeMounts.-.mountPath"]
	args := job.lists["spec.template.spec.containers.-.args"]
	require.NotEmpty(t, args)

	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var hlogs []string
	for i := 0; i < n; i++ {
		var a []string
		for _, s := range args {
			s = strings.ReplaceAll(s, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(i))
			a = append(a, strings.ReplaceAll(s, "${START_AT}", start))
		}
		w, err := parseWrkArgs(a)
		require.NoError(t, err, "shard %d: %q", i, a)
		assert.Equal(t, i, w.Config.Shard)
		assert.Equal(t, n, w.Config.Shards, "-shard i/n agrees with completions")
		assert.Equal(t, start, w.Config.StartAt.UTC().Format(time.RFC3339))
		assert.Greater(t, w.Config.Rate, 0.0)
		assert.True(t, strings.HasPrefix(w.Hlog, mount+"/"), "shard %d writes its log to the shared volume", i)
		hlogs = append(hlogs, w.Hlog)
	}

	merge := walkManifest(t, filepath.Join(dir, "loadgen-merge-job.yaml"))
	require.Len(t, merge, 1)
	m := merge[0]
	assert.Equal(t, "Job", m.scalars["kind"])
	assert.Equal(t, claim, m.scalars["spec.template.spec.volumes.-.persistentVolumeClaim.claimName"])
	margs := m.lists["spec.template.spec.containers.-.args"]
	require.NotEmpty(t, margs)
	assert.Equal(t, "merge", margs[0])
	ma, err := parseMergeArgs(margs[1:])
	require.NoError(t, err)
	assert.Equal(t, hlogs, ma.Files, "the merge reads every shard's log")
	assert.True(t, strings.HasPrefix(ma.Out, mount+"/"))
}
