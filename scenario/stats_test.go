package scenario

import (
	"math"
	"testing"
)

// Reference values: R's t.test(a, b) (Welch) and qt(0.975, df).
func TestWelchAndQuantiles(t *testing.T) {
	for _, c := range []struct{ df, q float64 }{{1, 12.7062}, {4, 2.7764}, {9, 2.2622}, {30, 2.0423}} {
		if got := TQuantile975(c.df); math.Abs(got-c.q) > 1e-3 {
			t.Errorf("t(0.975, %g) = %.4f, want %.4f", c.df, got, c.q)
		}
	}
	// Two-sided tail of t=2.7764 at df=4 is 0.05.
	if p := 2 * studentTail(2.7764, 4); math.Abs(p-0.05) > 1e-4 {
		t.Errorf("p = %.5f, want 0.05", p)
	}
	w := WelchTest([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10})
	// t = 3/sqrt(2.5/5+10/5) = 1.8974, df = 5.882; p ≈ 0.1077.
	if math.Abs(w.T-1.8974) > 1e-3 || math.Abs(w.DF-5.882) > 1e-2 || math.Abs(w.P-0.1077) > 2e-3 {
		t.Errorf("Welch = %+v", w)
	}
	if w := WelchTest([]float64{0, 0, 0}, []float64{0.4, 0.4, 0.4}); w.P > 1e-9 {
		t.Errorf("constant samples with different means: %+v", w)
	}
}
