package ui

import (
	"math"
	"strconv"
)

// Number formatting for the canvas: every function appends to a caller's
// buffer so the steady state allocates nothing. Units are ASCII ("us")
// because the bitmap font is.

// AppendUS appends a duration given in microseconds: "850us", "1.25ms",
// "12.5ms", "125ms", "1.50s".
func AppendUS(dst []byte, us int64) []byte {
	switch {
	case us < 0:
		return append(dst, '-')
	case us < 1000:
		dst = strconv.AppendInt(dst, us, 10)
		return append(dst, "us"...)
	case us < 1000000:
		dst = appendSig3(dst, float64(us)/1e3)
		return append(dst, "ms"...)
	}
	dst = appendSig3(dst, float64(us)/1e6)
	return append(dst, 's')
}

// appendSig3 appends v (>= 1) with three significant digits.
func appendSig3(dst []byte, v float64) []byte {
	prec := 2
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	return strconv.AppendFloat(dst, v, 'f', prec, 64)
}

// AppendSeconds appends a simulated time in nanoseconds as seconds,
// rounded to the nearest millisecond as the page's panel rounds it
// (JavaScript's toFixed(3)): "12.346s" for 12 345 678 901 ns.
func AppendSeconds(dst []byte, ns int64) []byte {
	ms := (ns + 5e5) / 1e6
	dst = strconv.AppendInt(dst, ms/1000, 10)
	dst = append(dst, '.')
	f := ms % 1000
	if f < 100 {
		dst = append(dst, '0')
	}
	if f < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, f, 10)
	return append(dst, 's')
}

// AppendSI appends v with a k/M/G suffix and three significant digits:
// "950", "12.3k", "4.56M". NaN gives "-".
func AppendSI(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, '-')
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	suffix := byte(0)
	for _, s := range []byte{'k', 'M', 'G', 'T'} {
		if v < 999.5 {
			break
		}
		v /= 1000
		suffix = s
	}
	if suffix == 0 && v == math.Trunc(v) {
		dst = strconv.AppendInt(dst, int64(v), 10)
	} else if v < 1 {
		dst = strconv.AppendFloat(dst, v, 'f', 2, 64)
	} else {
		dst = appendSig3(dst, v)
	}
	if suffix != 0 {
		dst = append(dst, suffix)
	}
	return dst
}

// AppendFloat appends v with prec decimals ("-" for NaN).
func AppendFloat(dst []byte, v float64, prec int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, '-')
	}
	return strconv.AppendFloat(dst, v, 'f', prec, 64)
}

// AppendPercent appends a fraction (0..1) as a percentage with one
// decimal: "12.3%".
func AppendPercent(dst []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(dst, '-')
	}
	dst = strconv.AppendFloat(dst, f*100, 'f', 1, 64)
	return append(dst, '%')
}

// AppendChange appends the relative change from a to b as a signed
// whole percentage ("+12%", "-40%", "0%"); "n/a" when a is 0.
func AppendChange(dst []byte, a, b int64) []byte {
	if a == 0 {
		if b == 0 {
			return append(dst, "0%"...)
		}
		return append(dst, "n/a"...)
	}
	p := math.Round(float64(b-a) / float64(a) * 100)
	if p > 0 {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, int64(p), 10)
	return append(dst, '%')
}

// AppendInt appends n in decimal.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// AppendSpeed appends a speed in simulated seconds per wall second:
// "1x", "0.25x", "1000x", "max" for 0.
func AppendSpeed(dst []byte, s float64) []byte {
	if s == 0 {
		return append(dst, "max"...)
	}
	switch {
	case s >= 100:
		dst = strconv.AppendFloat(dst, math.Round(s), 'f', 0, 64)
	case s >= 1:
		dst = strconv.AppendFloat(dst, s, 'f', -1, 64)
		if len(dst) > 0 && countDecimals(dst) > 2 {
			dst = dst[:len(dst)-countDecimals(dst)+2]
		}
	default:
		dst = strconv.AppendFloat(dst, s, 'g', 2, 64)
	}
	return append(dst, 'x')
}

// countDecimals counts the digits after the last '.' of a number at the
// end of b (0 if none).
func countDecimals(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '.' {
			return len(b) - 1 - i
		}
		if b[i] < '0' || b[i] > '9' {
			return 0
		}
	}
	return 0
}
