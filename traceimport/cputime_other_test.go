//go:build !unix

package traceimport

// cpuSeconds is unknown here: -1 (the timings fall back to the wall
// clock).
func cpuSeconds() float64 { return -1 }
