package trace

import (
	"io"

	"schedplay/engine/cpumask"
)

// DefaultMaxBytes is the default cap on a trace file: 256 MB (a browser
// tab loads a trace of a few hundred MB; perfetto.md).
const DefaultMaxBytes = 256 << 20

// tailRoom is kept free under the cap for the file's closing metadata.
const tailRoom = 4096

// Options bound a trace: its size, the simulated time it covers and the
// CPUs it shows.
type Options struct {
	// MaxBytes caps the file (uncompressed); once reached, later events
	// are dropped and the trace records where it was cut. 0: the default.
	MaxBytes int64
	// Start and End bound the simulated time traced, in ns: [Start, End).
	// End 0: to the end of the run. Slices crossing an edge are clipped.
	Start, End int64
	// CPUs limits the trace to these CPUs (zero-length: all).
	CPUs cpumask.Mask
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o
}

func (o Options) in(t int64) bool { return t >= o.Start && (o.End <= 0 || t < o.End) }

func (o Options) cpu(cpu int) bool { return o.CPUs.Len() == 0 || o.CPUs.Test(cpu) }

// clip clips [s, e) to the window; ok is false when nothing is left.
func (o Options) clip(s, e int64) (int64, int64, bool) {
	s = max(s, o.Start)
	if o.End > 0 {
		e = min(e, o.End)
	}
	return s, e, e > s || (e == s && o.in(s))
}

// Stats describes a finished trace.
type Stats struct {
	Events, Dropped int
	Bytes           int64 // bytes written (uncompressed)
	CutAt           int64 // simulated ns of the cut by MaxBytes; -1 when not cut
	MaxBytes        int64
}

type cutState struct{ at int64 }

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
