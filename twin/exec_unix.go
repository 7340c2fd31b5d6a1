//go:build unix

package twin

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// runTool runs a benchmark tool with a timeout and returns its stdout and
// stderr together (perf prints to stdout, schbench to both). The tool
// runs in its own process group, so a timeout kills every process it
// forked (perf bench sched messaging forks 40 per group), not only it.
func runTool(ctx context.Context, timeout time.Duration, path string, args ...string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		what := err.Error()
		if ctx.Err() == context.DeadlineExceeded {
			what = fmt.Sprintf("timed out after %v", timeout)
		}
		if tail := strings.TrimSpace(out.String()); tail != "" {
			if len(tail) > 300 {
				tail = "…" + tail[len(tail)-300:]
			}
			what += ": " + tail
		}
		return out.String(), wall, fmt.Errorf("%s: %s", path, what)
	}
	return out.String(), wall, nil
}
