package ui

import (
	"math"

	"schedplay/engine/histo"
)

// Latency histograms on a log axis: the engine's HdrHistogram buckets are
// regrouped into NBins equal steps of log10(µs) from 1 µs to a decade.

// NBins is the number of log-spaced bins of a latency histogram.
const NBins = 64

// LogBins is a histogram regrouped on a log axis.
type LogBins struct {
	Count [NBins]int64
	// MaxUS is the axis end (a power of ten); Peak the largest bin.
	MaxUS int64
	Peak  int64
	Total int64
}

// DecadeCeil returns the smallest power of ten >= us, and at least 100.
func DecadeCeil(us int64) int64 {
	d := int64(100)
	for d < us && d < math.MaxInt64/10 {
		d *= 10
	}
	return d
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

// Fill regroups bars onto the axis 1 µs .. maxUS; each bucket counts at
// its midpoint.
func (b *LogBins) Fill(bars []histo.Bar, maxUS int64) {
	*b = LogBins{MaxUS: maxUS}
	for _, bar := range bars {
		mid := float64(bar.From+bar.To) / 2
		i := min(int(LogPos(mid, maxUS)*NBins), NBins-1)
		b.Count[i] += bar.Count
		b.Total += bar.Count
	}
	for _, c := range b.Count {
		b.Peak = max(b.Peak, c)
	}
}
