package scenario

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Welch is Welch's unequal-variances t-test of two samples: whether their
// means differ, without assuming equal variances (Welch 1947). The
// statistic is t = (mean(b)−mean(a)) / sqrt(sa²/na + sb²/nb) with the
// Welch–Satterthwaite degrees of freedom; P is the two-sided p-value from
// Student's t distribution. With fewer than two values in a sample, or
// no variance in either, P is NaN (no test possible) unless the means
// differ with zero variance on both sides (P = 0).
type Welch struct {
	T, DF, P float64
}

// WelchTest runs Welch's t-test on a and b.
func WelchTest(a, b []float64) Welch {
	na, nb := float64(len(a)), float64(len(b))
	if na < 2 || nb < 2 {
		return Welch{math.NaN(), math.NaN(), math.NaN()}
	}
	ma, sa := meanStdev(a)
	mb, sb := meanStdev(b)
	va, vb := sa*sa/na, sb*sb/nb
	if va+vb == 0 {
		if ma == mb {
			return Welch{0, math.NaN(), 1}
		}
		return Welch{math.Inf(sign(mb - ma)), math.NaN(), 0}
	}
	t := (mb - ma) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/(na-1) + vb*vb/(nb-1))
	return Welch{T: t, DF: df, P: 2 * studentTail(math.Abs(t), df)}
}

func sign(x float64) int {
	if x < 0 {
		return -1
	}
	return 1
}

// studentTail is P(T > t) for Student's t with df degrees of freedom,
// t ≥ 0: ½·I_{df/(df+t²)}(df/2, ½), with gonum's regularized incomplete
// beta function.
func studentTail(t, df float64) float64 {
	return 0.5 * mathext.RegIncBeta(df/2, 0.5, df/(df+t*t))
}

// TQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom (the half-width factor of a two-sided 95% interval): the t whose
// upper tail is 0.025, from the inverse incomplete beta function
// (x = I⁻¹_{0.05}(df/2, ½), t = √(df(1−x)/x)).
func TQuantile975(df float64) float64 {
	if df < 1 || math.IsNaN(df) {
		return math.NaN()
	}
	x := mathext.InvRegIncBeta(df/2, 0.5, 0.05)
	return math.Sqrt(df * (1 - x) / x)
}

// CI95 is the half-width of the two-sided 95% confidence interval of the
// mean of xs (Student's t, n−1 degrees of freedom); NaN for n < 2.
func CI95(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	_, sd := meanStdev(xs)
	return TQuantile975(float64(len(xs)-1)) * sd / math.Sqrt(float64(len(xs)))
}
