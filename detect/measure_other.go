//go:build !linux

package detect

import (
	"context"
	"errors"
)

func measure(context.Context, *Result, MeasureOptions) (*Measurements, error) {
	return nil, errors.New("cost measurements need Linux (sched_setaffinity, futex); use --quick")
}
