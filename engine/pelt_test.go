package engine

import "testing"

func TestPELTHalfLife(t *testing.T) {
	// y^32 must be one half within rounding.
	y := peltYN[1]
	v := fixOne
	for i := 0; i < 32; i++ {
		v = mulFix(v, y)
	}
	if d := v - fixOne/2; d > 1<<12 || d < -(1<<12) {
		t.Fatalf("y^32 = %d, want %d", v, fixOne/2)
	}
	// A signal driven at 1024 from 0 reaches half after 32 periods.
	var s signal
	s.set(0, 1024)
	if got := s.at(32 * peltPeriodNS); got < 508 || got > 516 {
		t.Fatalf("after one half-life: %d, want ~512", got)
	}
	if got := s.at(400 * peltPeriodNS); got < 1020 {
		t.Fatalf("long after: %d, want ~1024", got)
	}
	s.set(400*peltPeriodNS, 0)
	if got := s.at(432 * peltPeriodNS); got < 506 || got > 518 {
		t.Fatalf("decay one half-life: %d", got)
	}
}

// peltDecay's 64-bit product equals mulFix's 128-bit one for every dt.
func TestPeltDecayProductFits(t *testing.T) {
	for dt := int64(1); dt < 70*peltPeriodNS*peltHalfLife; dt = dt*17/16 + 1 {
		n, rem := dt/peltPeriodNS, dt%peltPeriodNS
		want := int64(0)
		if n < 64*peltHalfLife {
			f := peltYN[n%peltHalfLife] >> uint(n/peltHalfLife)
			want = mulFix(f, fixOne-((fixOne-peltYN[1])*rem)/peltPeriodNS)
		}
		if got := peltDecay(dt); got != want {
			t.Fatalf("peltDecay(%d) = %d, want %d", dt, got, want)
		}
	}
}
