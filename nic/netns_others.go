//go:build !linux

package nic

import "errors"

// errUnsupported is returned on systems without Linux's ethtool ioctls.
var errUnsupported = errors.New("nic: ethtool channels and network namespaces need Linux")

func inNetNS(path string, fn func() error) error {
	if path != "" {
		return errUnsupported
	}
	return fn()
}

func openEthtool(string) (ethtoolAPI, error) { return nil, errUnsupported }

func checkName(name string) error {
	if name == "" || len(name) >= 16 {
		return errors.New("nic: interface name must be 1 to 15 bytes")
	}
	return nil
}

func netnsInode() (uint64, error) { return 0, errUnsupported }
