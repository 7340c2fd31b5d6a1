//go:build !unix && !(js && wasm)

package benchrun

// CPUSeconds is unknown here: -1.
func CPUSeconds() float64 { return -1 }
