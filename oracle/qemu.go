package oracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// TimeMode is how the guest's clock runs.
type TimeMode string

const (
	// Icount: single-threaded TCG with -icount shift=0,sleep=off: guest
	// time follows the instructions executed, 1 ns each, and an idle
	// guest skips ahead to its next timer. The guest is a 1 GHz machine
	// whose memory never stalls, and what it does in guest time does not
	// depend on how busy the host is: the same inputs give the same trace.
	Icount TimeMode = "icount"
	// HostClock: multi-threaded TCG; the guest clock follows the host's,
	// so a loaded host stretches everything the guest times.
	HostClock TimeMode = "host"
)

// bootOptions say how to boot one guest.
type bootOptions struct {
	QEMU    string // qemu-system-x86_64
	Kernel  string // vmlinuz
	Initrd  string // the initramfs
	Shape   Shape
	Time    TimeMode
	Dir     string        // where the console log and the report go
	Timeout time.Duration // of wall time
}

// bootResult is what came back: the guest's report (ttyS1, its text
// parts) with the gzip'd trace taken out, and the console.
type bootResult struct {
	Report  string
	TraceGz []byte
	Console string
	Wall    time.Duration
	Accel   string // what QEMU ran with, for the record
}

// qemuArgs is the command line of a boot.
func (o *bootOptions) qemuArgs(report, console string) []string {
	accel := []string{"-accel", "tcg,thread=multi"}
	if o.Time == Icount {
		accel = []string{"-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off,align=off",
			// The real-time clock starts at a fixed date and runs on guest
			// time: nothing of the host's clock reaches the guest.
			"-rtc", "base=2026-01-01T00:00:00,clock=vm"}
	}
	args := append(accel, o.Shape.qemuArgs()...)
	return append(args,
		"-kernel", o.Kernel, "-initrd", o.Initrd,
		// sched_verbose: the domains' spans in debugfs; nokaslr and
		// no watchdogs: fewer sources of variation between boots.
		// and no randomness the host could seed (address-space and kernel
		// stack randomisation off, the CPU and bootloader not trusted as
		// entropy sources).
		"-append", "console=ttyS0 quiet panic=-1 sched_verbose nokaslr nowatchdog nosoftlockup norandmaps randomize_kstack_offset=off random.trust_cpu=off random.trust_bootloader=off",
		"-display", "none", "-no-reboot", "-monitor", "none", "-nodefaults",
		"-serial", "file:"+console, "-serial", "file:"+report,
	)
}

// boot runs the guest to its poweroff (or the timeout).
func boot(ctx context.Context, o bootOptions) (*bootResult, error) {
	report, console := filepath.Join(o.Dir, "report.txt"), filepath.Join(o.Dir, "console.log")
	args := o.qemuArgs(report, console)
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.QEMU, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	res := &bootResult{Wall: time.Since(start), Accel: accelText(o.Time)}
	rb, _ := os.ReadFile(report)
	cb, _ := os.ReadFile(console)
	text, gz := splitTrace(rb)
	// A console tty turns "\n" into "\r\n" (onlcr); the report's port is
	// raw, but a guest that failed before stty may not be.
	res.Report, res.TraceGz = strings.ReplaceAll(text, "\r\n", "\n"), gz
	res.Console = strings.ReplaceAll(string(cb), "\r\n", "\n")
	if ctx.Err() == context.DeadlineExceeded {
		return res, fmt.Errorf("the guest did not power off within %v (console tail: %s)", o.Timeout, tail(res.Console, 600))
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return res, fmt.Errorf("qemu exited %d: %s (console tail: %s)", ee.ExitCode(), strings.TrimSpace(stderr.String()), tail(res.Console, 600))
		}
		return res, fmt.Errorf("qemu: %v", err)
	}
	if !strings.Contains(res.Report, markEnd) {
		return res, fmt.Errorf("the guest powered off before its report was complete (console tail: %s)", tail(res.Console, 800))
	}
	return res, nil
}

func accelText(t TimeMode) string {
	if t == Icount {
		return "TCG, one host thread, -icount shift=0,sleep=off (guest time: 1 ns per instruction)"
	}
	return "TCG, one host thread per vCPU (guest time: the host's clock)"
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// section returns the report's text between marker a and the next
// marker line.
func section(report, a string) (string, bool) {
	i := strings.Index(report, a+"\n")
	if i < 0 {
		return "", false
	}
	rest := report[i+len(a)+1:]
	if j := strings.Index(rest, "\n=== schedplay "); j >= 0 {
		return rest[:j+1], true
	}
	return rest, true
}

// splitTrace takes the gzip'd trace out of a report: the bytes after the
// line "=== schedplay trace gzip N ===", N of them; the rest is text.
func splitTrace(report []byte) (string, []byte) {
	i := bytes.Index(report, []byte(markTrace+" "))
	if i < 0 {
		return string(report), nil
	}
	eol := bytes.IndexByte(report[i:], '\n')
	if eol < 0 {
		return string(report), nil
	}
	var n int
	if _, err := fmt.Sscanf(string(report[i+len(markTrace)+1:i+eol]), "%d ===", &n); err != nil {
		return string(report), nil
	}
	start := i + eol + 1
	if n < 0 || start+n > len(report) {
		return string(report[:i]), nil // cut short: no trace
	}
	return string(report[:i]) + string(report[start+n:]), report[start : start+n]
}
