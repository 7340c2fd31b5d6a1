//go:build !unix

package workload

// cpuSeconds is unknown here (js/wasm has no getrusage): -1.
func cpuSeconds() float64 { return -1 }
