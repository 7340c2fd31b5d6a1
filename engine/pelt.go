package engine

import "math/bits"

// PELT (per-entity load tracking) signals, kept lazily like the kernel: a
// signal is brought up to date only when it is read or its input changes.
//
// A signal tracks an input x (a task's weight while runnable, 1024 while
// running, ...) with a geometric average whose weight halves every 32
// periods of 1024 µs (kernel-reference.md §3.6): after an input change the
// average moves from its old value towards x, covering half of the distance
// in 32.768 ms. All arithmetic is integer so results are identical natively
// and in WebAssembly.

const (
	peltPeriodNS = 1024 * 1000 // one PELT period: 1024 µs
	peltHalfLife = 32          // periods for the weight to halve
	fixShift     = 32
	fixOne       = int64(1) << fixShift
)

// peltYN[n] = y^n × 2^32 for n in 0..31, y^32 = 1/2 (the kernel's
// runnable_avg_yN_inv table, recomputed here with integer square roots so it
// needs no floating point).
var peltYN = func() [peltHalfLife]int64 {
	var t [peltHalfLife]int64
	// y = 2^(-1/32) by five integer square roots of 1/2: r_k = 2^(-1/2^k).
	r := uint64(fixOne / 2)
	for k := 0; k < 5; k++ {
		r = isqrt(r << fixShift) // sqrt(r/2^32) × 2^32
	}
	t[0] = fixOne
	for i := 1; i < peltHalfLife; i++ {
		t[i] = mulFix(t[i-1], int64(r))
	}
	return t
}()

// isqrt is the integer square root (floor) by Newton's method from above.
func isqrt(x uint64) uint64 {
	if x == 0 {
		return 0
	}
	r := uint64(1) << 32 // >= sqrt of any uint64
	for {
		nr := (r + x/r) / 2
		if nr >= r {
			return r
		}
		r = nr
	}
}

// peltDecay returns the factor (×2^32) by which a signal's distance to its
// input shrinks over dt nanoseconds.
func peltDecay(dt int64) int64 {
	if dt <= 0 {
		return fixOne
	}
	n := dt / peltPeriodNS
	rem := dt % peltPeriodNS
	if n >= 64*peltHalfLife {
		return 0
	}
	f := peltYN[n%peltHalfLife] >> uint(n/peltHalfLife)
	// Within a period, interpolate linearly between 1 and y.
	yFrac := fixOne - ((fixOne-peltYN[1])*rem)/peltPeriodNS
	// mulFix(f, yFrac): both are in [0, 2^32] and not both 2^32 (dt > 0),
	// so the product fits in 64 bits unsigned.
	return int64(uint64(f) * uint64(yFrac) >> fixShift)
}

// mulFix returns a×f/2^32 for a fixed-point factor f in [0, 2^32], exact
// for any int64 a (a 128-bit product, so no overflow).
func mulFix(a, f int64) int64 {
	neg := a < 0
	if neg {
		a = -a
	}
	hi, lo := bits.Mul64(uint64(a), uint64(f))
	r := int64(hi<<(64-fixShift) | lo>>fixShift)
	if neg {
		return -r
	}
	return r
}

// signal is one lazily-updated PELT average.
type signal struct {
	avg   int64 // current average, same unit as input
	input int64
	last  int64 // time of the last update
}

// at brings the signal up to now and returns its value. It is small
// enough to inline: the balancer reads the same CPUs' signals again and
// again at one instant (most reads find them up to date), and under
// WebAssembly a call costs far more than the test it would make.
func (s *signal) at(now int64) int64 {
	if now > s.last {
		s.advance(now)
	}
	return s.avg
}

// advance decays the average from the last update to now (> last).
func (s *signal) advance(now int64) {
	d := peltDecay(now - s.last)
	s.avg = s.input + mulFix(s.avg-s.input, d)
	s.last = now
}

// set changes the input from now on.
func (s *signal) set(now, input int64) {
	s.at(now)
	s.input = input
}

// add shifts both the average and the input (attach/detach of an entity's
// contribution to a runqueue sum), never letting them go negative.
func (s *signal) add(now, avgDelta, inputDelta int64) {
	s.at(now)
	s.avg = max(0, s.avg+avgDelta)
	s.input = max(0, s.input+inputDelta)
}
