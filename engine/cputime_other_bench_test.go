//go:build !unix && !(js && wasm)

package engine

// cpuSeconds is unknown here: -1.
func cpuSeconds() float64 { return -1 }
