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
	// Starved is the mean number of idle CPUs that a waiting task was
	// allowed to run on, over the snapshots of the interval; Waking the
	// mean number of CPUs leaving a C-state (NaN: no snapshot).
	Starved, Waking Ring

	prev    engine.Totals
	prevOps [MaxHistPanels]int64
	primed  bool
	// Snapshots of the current interval (AddState).
	nstate          int
	starved, waking int
	lastState       int64
}

// NewArmSeries returns empty series.
func NewArmSeries() *ArmSeries {
	a := &ArmSeries{T: NewRing(SeriesLen), Probes: NewRing(SeriesLen), Starved: NewRing(SeriesLen), Waking: NewRing(SeriesLen)}
	for i := range a.Ops {
		a.Ops[i] = NewRing(SeriesLen)
	}
	a.lastState = -1
	return a
}

// Reset forgets every sample.
func (a *ArmSeries) Reset() {
	a.T.Reset()
	a.Probes.Reset()
	a.Starved.Reset()
	a.Waking.Reset()
	for i := range a.Ops {
		a.Ops[i].Reset()
	}
	a.primed = false
	a.nstate, a.starved, a.waking, a.lastState = 0, 0, 0, -1
}

// AddState counts the machine's state c, seen in the snapshot of
// simulated time now, towards the current interval; a snapshot already
// counted (the same now) is skipped.
func (a *ArmSeries) AddState(now int64, c Conservation) {
	if now == a.lastState {
		return
	}
	a.lastState = now
	a.nstate++
	a.starved += c.Starved
	a.waking += c.Waking
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
	if a.nstate > 0 {
		a.Starved.Push(float64(a.starved) / float64(a.nstate))
		a.Waking.Push(float64(a.waking) / float64(a.nstate))
	} else {
		a.Starved.Push(math.NaN())
		a.Waking.Push(math.NaN())
	}
	a.nstate, a.starved, a.waking = 0, 0, 0
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
