package ui

import "math"

// Ring is a fixed-capacity ring of samples for the time-series charts;
// once full, each Push drops the oldest.
type Ring struct {
	buf  []float64
	next int
	n    int
}

// NewRing returns an empty ring holding up to n samples.
func NewRing(n int) Ring { return Ring{buf: make([]float64, n)} }

// Push appends v.
func (r *Ring) Push(v float64) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
}

// Len is the number of samples held; Cap the most it holds.
func (r *Ring) Len() int { return r.n }
func (r *Ring) Cap() int { return len(r.buf) }

// At returns sample i, 0 being the oldest.
func (r *Ring) At(i int) float64 {
	return r.buf[(r.next-r.n+i+len(r.buf))%len(r.buf)]
}

// Last returns the newest sample (NaN when empty).
func (r *Ring) Last() float64 {
	if r.n == 0 {
		return math.NaN()
	}
	return r.At(r.n - 1)
}

// Max is the largest non-NaN sample (0 when there is none).
func (r *Ring) Max() float64 {
	m := 0.0
	for i := 0; i < r.n; i++ {
		if v := r.At(i); !math.IsNaN(v) && v > m {
			m = v
		}
	}
	return m
}

// MeanLast is the mean of the newest k non-NaN samples (NaN when none).
func (r *Ring) MeanLast(k int) float64 {
	s, c := 0.0, 0
	for i := r.n - 1; i >= 0 && i >= r.n-k; i-- {
		if v := r.At(i); !math.IsNaN(v) {
			s += v
			c++
		}
	}
	if c == 0 {
		return math.NaN()
	}
	return s / float64(c)
}

// Reset empties the ring.
func (r *Ring) Reset() { r.next, r.n = 0, 0 }
