package ui

import (
	"math"

	"schedplay/engine"
)

// Time series for the charts, sampled by simulated time: every sample
// holds what happened since the previous one, so the rates stay right
// when the sampling interval changes with the speed.

// SeriesLen is how many samples a chart shows.
const SeriesLen = 120

// SampleInterval returns the simulated time between samples for a speed
// in simulated seconds per wall second: about ten samples per wall
// second, rounded to 1, 2 or 5 × a power of ten, at least 10 µs.
func SampleInterval(speed float64) int64 {
	if !(speed > 0) {
		speed = 1
	}
	want := speed * 0.1 * float64(engine.Second)
	iv := int64(10 * engine.Microsecond)
	for {
		for _, m := range [3]int64{1, 2, 5} {
			if float64(iv*m) >= want {
				return iv * m
			}
		}
		if iv > math.MaxInt64/100 {
			return iv
		}
		iv *= 10
	}
}

// ArmSeries is one simulation's time series.
type ArmSeries struct {
	T      Ring // sample time, seconds
	Probes Ring // CPUs probed per select_idle_cpu call (NaN: no call)
	Ops    [MaxHistPanels]Ring
	// Cons is the fraction of the interval during which an idle CPU
	// coexisted with a waiting task anywhere; LLCCons within one LLC.
	Cons, LLCCons Ring

	prev    engine.Totals
	prevOps [MaxHistPanels]int64
	primed  bool
}

// NewArmSeries returns empty series.
func NewArmSeries() *ArmSeries {
	a := &ArmSeries{T: NewRing(SeriesLen), Probes: NewRing(SeriesLen), Cons: NewRing(SeriesLen), LLCCons: NewRing(SeriesLen)}
	for i := range a.Ops {
		a.Ops[i] = NewRing(SeriesLen)
	}
	return a
}

// Reset forgets every sample.
func (a *ArmSeries) Reset() {
	a.T.Reset()
	a.Probes.Reset()
	a.Cons.Reset()
	a.LLCCons.Reset()
	for i := range a.Ops {
		a.Ops[i].Reset()
	}
	a.primed = false
}

// Sample records the interval since the previous call: tot are the
// engine's counters now, ops[i] workload i's completed operations. The
// first call only remembers the counters.
func (a *ArmSeries) Sample(tot engine.Totals, ops []int64) {
	if !a.primed || tot.Now <= a.prev.Now {
		a.prev, a.primed = tot, true
		copy(a.prevOps[:], ops)
		return
	}
	dt := float64(tot.Now - a.prev.Now)
	a.T.Push(float64(tot.Now) / float64(engine.Second))
	if c := tot.SISCalls - a.prev.SISCalls; c > 0 {
		a.Probes.Push(float64(tot.SISProbes-a.prev.SISProbes) / float64(c))
	} else {
		a.Probes.Push(math.NaN())
	}
	for i := range a.Ops {
		if i < len(ops) {
			a.Ops[i].Push(float64(ops[i]-a.prevOps[i]) / dt * float64(engine.Second))
		}
	}
	a.Cons.Push(float64(tot.ConservationNS-a.prev.ConservationNS) / dt)
	a.LLCCons.Push(float64(tot.LLCConservationNS-a.prev.LLCConservationNS) / dt)
	a.prev = tot
	copy(a.prevOps[:], ops)
}

// NiceCeil rounds v up to 1, 2 or 5 × a power of ten (v <= 0 gives 1).
func NiceCeil(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range [4]float64{1, 2, 5, 10} {
		if m*e >= v*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}

// decadeLabels name the histogram axis ticks 10^0 .. 10^7 µs.
var decadeLabels = [...]string{"1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s"}
