//go:build !unix

package engine

// cpuSeconds is unknown here (js/wasm has no getrusage): -1.
func cpuSeconds() float64 { return -1 }
