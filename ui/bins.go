package ui

import (
	"math"

	"schedplay/engine/histo"
)

// Latency histograms on a log axis: the engine's display buckets (each
// power of two split in four, in whole microseconds) are regrouped into
// BinsPerDecade equal steps of log10(µs) from 1 µs to a decade. A bucket
// [From, To] covers the interval [From, To+1) µs and its count is spread
// over the bins that interval overlaps in proportion to the overlap (in
// log space), so the integer resolution of small latencies does not
// leave a comb of empty bins between 1 and 10 µs.

// BinsPerDecade is the log-bin density: 10 bins per decade (a ratio of
// 1.26 per bin, coarser than the engine's 1.19 per bucket).
const BinsPerDecade = 10

// MaxDecades is the widest axis: 1 µs to 100 s.
const MaxDecades = 8

// NBins is the most bins a histogram has.
const NBins = BinsPerDecade * MaxDecades

// LogBins is a histogram regrouped on a log axis.
type LogBins struct {
	Count [NBins]float64
	// N is the number of bins in use: the axis spans Decades decades
	// from 1 µs to MaxUS = 10^Decades.
	N       int
	Decades int
	MaxUS   int64
	// Peak is the largest bin; Total the sum of all counts.
	Peak  float64
	Total int64
}

// DecadeCeil returns the smallest power of ten >= us, at least 100 and
// at most 10^MaxDecades.
func DecadeCeil(us int64) int64 {
	d := int64(100)
	for d < us && d < pow10(MaxDecades) {
		d *= 10
	}
	return d
}

func pow10(n int) int64 {
	v := int64(1)
	for ; n > 0; n-- {
		v *= 10
	}
	return v
}

// decadesOf is log10(maxUS) for a power of ten.
func decadesOf(maxUS int64) int {
	n := 0
	for v := int64(1); v < maxUS && n < MaxDecades; v *= 10 {
		n++
	}
	return max(n, 1)
}

// LogPos maps us to 0..1 on the axis 1 µs .. maxUS (values below 1 µs
// at 0, above maxUS at 1).
func LogPos(us float64, maxUS int64) float64 {
	if us <= 1 {
		return 0
	}
	p := math.Log10(us) / math.Log10(float64(maxUS))
	return min(p, 1)
}

// BinEdge is the lower edge in µs of bin i (BinEdge(N) the axis end).
func BinEdge(i int) float64 { return math.Pow(10, float64(i)/BinsPerDecade) }

// Fill regroups bars onto the axis 1 µs .. maxUS (a power of ten).
func (b *LogBins) Fill(bars []histo.Bar, maxUS int64) {
	d := decadesOf(maxUS)
	*b = LogBins{MaxUS: pow10(d), Decades: d, N: d * BinsPerDecade}
	for _, bar := range bars {
		b.Total += bar.Count
		lo := math.Log10(max(float64(bar.From), 1)) * BinsPerDecade
		hi := math.Log10(max(float64(bar.To+1), 1)) * BinsPerDecade
		if hi <= lo || lo >= float64(b.N) {
			// Below 1 µs, or at or past the axis end: the edge bin.
			i := min(max(int(lo), 0), b.N-1)
			b.Count[i] += float64(bar.Count)
			continue
		}
		per := float64(bar.Count) / (hi - lo)
		end := min(hi, float64(b.N))
		for i := int(lo); float64(i) < end; i++ {
			if ov := min(end, float64(i+1)) - max(lo, float64(i)); ov > 0 {
				b.Count[i] += per * ov
			}
		}
		// The part past the axis end lands in the last bin.
		b.Count[b.N-1] += per * (hi - end)
	}
	for i := 0; i < b.N; i++ {
		b.Peak = max(b.Peak, b.Count[i])
	}
}

// CountTop is the top of a log count axis for peak: the smallest power
// of ten >= peak, at least 10.
func CountTop(peak float64) float64 {
	t := 10.0
	for t < peak && t < 1e15 {
		t *= 10
	}
	return t
}

// countFloor is the bottom of the log count axis: half a wakeup, so a
// bin holding one wakeup has a visible bar.
const countFloor = 0.5

// CountPos maps a bin count to 0..1 on the log count axis countFloor ..
// top (0 for an empty bin).
func CountPos(c, top float64) float64 {
	if c <= countFloor {
		return 0
	}
	return min(math.Log10(c/countFloor)/math.Log10(top/countFloor), 1)
}
