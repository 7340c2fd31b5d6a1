// Package histo records latency distributions in an HdrHistogram (1 µs ..
// 60 s, three significant digits) and summarises them with the percentiles
// schbench prints. Exact minimum and maximum are kept beside the histogram,
// as schbench does.
package histo

import (
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Range of recorded values in microseconds.
const (
	LowestUS  = 1
	HighestUS = 60 * 1000 * 1000
	sigFigs   = 3
)

// Latency is a histogram of microsecond values.
type Latency struct {
	h        *hdr.Histogram
	min, max int64
	sum      int64
	bins     [displayBins]int64
}

// New returns an empty latency histogram.
func New() *Latency {
	return &Latency{h: hdr.New(LowestUS, HighestUS, sigFigs), min: -1}
}

// Record adds one value in microseconds; values above the range are clamped
// to it (and still counted), negative values to zero.
func (l *Latency) Record(us int64) {
	us = max(us, 0)
	if l.min < 0 || us < l.min {
		l.min = us
	}
	l.max = max(l.max, us)
	l.sum += us
	l.bins[displayBin(us)]++
	_ = l.h.RecordValue(min(us, HighestUS))
}

// Count is the number of recorded values.
func (l *Latency) Count() int64 { return l.h.TotalCount() }

// Percentile returns the value at percentile p (0..100).
func (l *Latency) Percentile(p float64) int64 {
	if l.Count() == 0 {
		return 0
	}
	return l.h.ValueAtPercentile(p)
}

// Merge adds every value of o into l.
func (l *Latency) Merge(o *Latency) {
	if o.Count() == 0 {
		return
	}
	l.h.Merge(o.h)
	if l.min < 0 || o.min < l.min {
		l.min = o.min
	}
	l.max = max(l.max, o.max)
	l.sum += o.sum
	for i, n := range o.bins {
		l.bins[i] += n
	}
}

// Reset empties the histogram.
func (l *Latency) Reset() {
	l.h.Reset()
	l.min, l.max, l.sum = -1, 0, 0
	l.bins = [displayBins]int64{}
}

// Bar is one non-empty bucket range of the distribution.
type Bar struct {
	From, To, Count int64
}

// Bars returns the non-empty display buckets in increasing order.
func (l *Latency) Bars() []Bar { return l.AppendBars(nil) }

// Display buckets: each power of two split in 4, kept beside the
// HdrHistogram so a live view can read the distribution every frame
// without allocating (the HdrHistogram's own iteration allocates).
const (
	subBins     = 4
	displayBins = 64 * subBins
)

func displayBin(v int64) int {
	if v < subBins {
		return int(max(v, 0))
	}
	m := bits.Len64(uint64(v)) - 1 // v in [2^m, 2^(m+1))
	return m*subBins + int((v>>(m-2))&(subBins-1))
}

func displayRange(i int) (from, to int64) {
	if i < subBins {
		return int64(i), int64(i)
	}
	m := i / subBins
	sub := int64(i % subBins)
	width := int64(1) << (m - 2)
	from = int64(1)<<m + sub*width
	return from, from + width - 1
}

// AppendBars appends the non-empty display buckets (each power of two
// split in four) to dst, in increasing order, allocating only when dst has
// no room.
func (l *Latency) AppendBars(dst []Bar) []Bar {
	dst = dst[:0]
	for i, n := range l.bins {
		if n > 0 {
			from, to := displayRange(i)
			dst = append(dst, Bar{From: from, To: to, Count: n})
		}
	}
	return dst
}

// Summary is the fixed set of statistics the CLI and page report.
type Summary struct {
	P50   int64   `json:"p50"`
	P75   int64   `json:"p75"`
	P90   int64   `json:"p90"`
	P95   int64   `json:"p95"`
	P99   int64   `json:"p99"`
	P995  int64   `json:"p99_5"`
	P999  int64   `json:"p99_9"`
	Min   int64   `json:"min"`
	Max   int64   `json:"max"`
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
}

// Summarize computes the Summary.
func (l *Latency) Summarize() Summary {
	n := l.Count()
	if n == 0 {
		return Summary{}
	}
	return Summary{
		P50: l.Percentile(50), P75: l.Percentile(75), P90: l.Percentile(90), P95: l.Percentile(95),
		P99: l.Percentile(99), P995: l.Percentile(99.5), P999: l.Percentile(99.9),
		Min: l.min, Max: l.max, Count: n, Mean: float64(l.sum) / float64(n),
	}
}

// CountAtOrBelow returns how many recorded values are at most v, at the
// histogram's resolution (values equivalent to v count). It walks every
// bucket and allocates: for end-of-run reports, not for every frame.
func (l *Latency) CountAtOrBelow(v int64) int64 {
	var n int64
	for _, b := range l.h.Distribution() {
		if b.From > v {
			break
		}
		n += b.Count
	}
	return n
}
