package ui

import "testing"

// BenchmarkLayoutPage2048 is the canvas layout of the hostile 2048-CPU
// flat-LLC machine in A/B, what the main thread does once the first arm
// of such a build arrives.
func BenchmarkLayoutPage2048(b *testing.B) {
	tp := machineWith(b, 1, 1024, 2, 1024)
	for b.Loop() {
		LayoutPage(tp, 1024, 768, 2, 1, nil)
	}
}
