//go:build !unix

package twin

import (
	"context"
	"errors"
	"time"
)

func runTool(ctx context.Context, timeout time.Duration, path string, args ...string) (string, time.Duration, error) {
	return "", 0, errors.New("running a benchmark tool is supported on Unix only")
}
