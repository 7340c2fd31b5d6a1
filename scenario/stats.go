package scenario

import "math"

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
// t ≥ 0: ½·I_{df/(df+t²)}(df/2, ½).
func studentTail(t, df float64) float64 {
	return 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
}

// TQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom (the half-width factor of a two-sided 95% interval), found by
// bisection on studentTail.
func TQuantile975(df float64) float64 {
	if df < 1 || math.IsNaN(df) {
		return math.NaN()
	}
	lo, hi := 0.0, 1000.0
	for range 200 {
		mid := (lo + hi) / 2
		if studentTail(mid, df) > 0.025 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
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

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated with its continued fraction (modified Lentz's method) on the
// side where it converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}
