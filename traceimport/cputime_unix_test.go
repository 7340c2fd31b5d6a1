//go:build unix

package traceimport

import "syscall"

// cpuSeconds is the CPU time this process has used (user + system), or
// -1. The import's timings use it rather than the wall clock, which on a
// machine shared with other jobs counts the time spent waiting for a
// core.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
