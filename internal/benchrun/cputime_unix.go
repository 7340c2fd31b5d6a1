//go:build unix

package benchrun

import "syscall"

// CPUSeconds is the CPU time this process has used (user + system), or
// -1. Benchmarks divide by it as well as by wall time: on a machine shared
// with other jobs the wall clock counts the time spent waiting for a core,
// the CPU clock does not.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
