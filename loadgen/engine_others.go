//go:build !linux

package loadgen

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("loadgen: only Linux is supported (the engine uses epoll and timerfd)")

func run(ctx context.Context, cfg Config) (*Result, error) { return nil, errUnsupported }

type generatorClock struct{}

func startGeneratorClock() generatorClock { return generatorClock{} }
func (generatorClock) use() GeneratorUse  { return GeneratorUse{} }
