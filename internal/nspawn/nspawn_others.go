//go:build !linux

package nspawn

import (
	"errors"
	"syscall"
)

var errUnsupported = errors.New("nspawn: systemd-nspawn containers need Linux")

func bootProcAttr() (*syscall.SysProcAttr, error) { return nil, errUnsupported }
