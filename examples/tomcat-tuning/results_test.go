//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nettune/nettune/tuning"
)

func TestFormatResults(t *testing.T) {
	res := []tuning.StepResult{
		{Name: "threads", Status: tuning.StatusReverted},
		{Name: "nic", Status: tuning.StatusSkipped, Reason: "no physical NIC"},
	}
	assert.Equal(t, "step     status     detail\n"+
		"threads  reverted   \n"+
		"nic      skipped    no physical NIC\n", formatResults(res))
}
