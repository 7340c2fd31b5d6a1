//go:build !linux

package twin

import (
	"context"
	"errors"
	"time"
)

var errBuiltinLinux = errors.New("the built-in benchmarks run on Linux only")

// BuiltinPipe is perf bench sched pipe -T on OS threads (Linux only).
func BuiltinPipe(ctx context.Context, loops int64, timeout time.Duration) (time.Duration, error) {
	return 0, errBuiltinLinux
}

// BuiltinMessaging is perf bench sched messaging -t on OS threads (Linux only).
func BuiltinMessaging(ctx context.Context, groups, loops int, timeout time.Duration) (time.Duration, error) {
	return 0, errBuiltinLinux
}
