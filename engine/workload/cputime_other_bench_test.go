//go:build !unix && !(js && wasm)

package workload

// cpuSeconds is unknown here: -1.
func cpuSeconds() float64 { return -1 }
