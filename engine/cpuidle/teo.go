package cpuidle

// The timer events oriented governor of Linux 5.2 (drivers/cpuidle/
// governors/teo.c at fc4ec72d, new in 5.1): it starts from the deepest
// state whose target residency fits the time to the next timer, and keeps
// per state "hits" (the CPU slept until the timer) and "misses" (something
// woke it earlier); when misses win, the shallower state with the most
// "early hits" is used instead, and a majority of recent short idle
// periods pulls the choice down to fit their average.

const (
	teoPulse      = 1024 // PULSE
	teoDecayShift = 3    // DECAY_SHIFT
	teoIntervals  = 8    // INTERVALS
	teoMaxStates  = 10   // CPUIDLE_STATE_MAX
)

type teoState struct{ earlyHits, hits, misses int64 }

// TEO is struct teo_cpu, one per CPU.
type TEO struct {
	timeSpanNS    int64
	sleepLengthNS int64
	states        [teoMaxStates]teoState
	lastState     int
	intervalIdx   int
	intervals     [teoIntervals]int64
	tickNS        int64 // TICK_NSEC, from the last selection
}

// NewTEO returns a teo device as teo_enable_device leaves it: no history,
// every recent interval "infinite" (UINT_MAX).
func NewTEO() *TEO {
	t := &TEO{lastState: -1}
	for i := range t.intervals {
		t.intervals[i] = uintMax
	}
	return t
}

// update is teo_update().
func (t *TEO) update(states []State) {
	sleepUS := t.sleepLengthNS / 1000
	var measured int64
	if t.timeSpanNS >= t.sleepLengthNS {
		measured = sleepUS // a safety net or a timer ended the period
	} else {
		lat := states[t.lastState].ExitLatencyUS
		measured = t.timeSpanNS / 1000
		// The exit is not worst case every time: deduct half of it.
		if measured >= lat {
			measured -= lat / 2
		} else {
			measured /= 2
		}
	}
	idxHit, idxTimer := -1, -1
	for i := range states {
		s := &t.states[i]
		s.earlyHits -= s.earlyHits >> teoDecayShift
		if states[i].TargetResidencyUS <= sleepUS {
			idxTimer = i
			if states[i].TargetResidencyUS <= measured {
				idxHit = i
			}
		}
	}
	if idxTimer >= 0 {
		s := &t.states[idxTimer]
		s.hits -= s.hits >> teoDecayShift
		s.misses -= s.misses >> teoDecayShift
		if idxTimer > idxHit {
			s.misses += teoPulse
			if idxHit >= 0 {
				t.states[idxHit].earlyHits += teoPulse
			}
		} else {
			s.hits += teoPulse
		}
	}
	if t.timeSpanNS >= t.sleepLengthNS {
		measured = uintMax // a timer wakeup: not part of the pattern
	}
	t.intervals[t.intervalIdx] = measured
	// v5.2 wraps only when the index passes INTERVALS, writing one slot
	// past the array (fixed in 5.3, "cpuidle: teo: Fix intervals[]
	// array indexing bug"); we wrap at INTERVALS.
	t.intervalIdx = (t.intervalIdx + 1) % teoIntervals
}

// Select is teo_select().
func (t *TEO) Select(states []State, in Input) (int, bool) {
	if t.lastState >= 0 {
		t.update(states)
		t.lastState = -1
	}
	t.sleepLengthNS = in.SleepLengthNS
	t.tickNS = in.TickUS * 1000
	durationUS := in.SleepLengthNS / 1000
	deltaTickUS := in.DeltaNextNS / 1000
	latencyReq := in.LatencyReqUS

	count := int64(0)
	maxEarly, idx := -1, -1
	refine := false
	for i, s := range states {
		if i >= teoMaxStates {
			break
		}
		if s.Disabled {
			// A disabled state's early hits still count against picking a
			// deeper state with fewer.
			if maxEarly >= 0 && count < t.states[i].earlyHits {
				count = t.states[i].earlyHits
			}
			continue
		}
		if idx < 0 {
			idx = i
		}
		if s.TargetResidencyUS > durationUS {
			break
		}
		if s.ExitLatencyUS > latencyReq {
			durationUS = states[idx].TargetResidencyUS
			refine = true
			break
		}
		idx = i
		if count < t.states[i].earlyHits && !(in.TickStopped && s.TargetResidencyUS < in.TickUS) {
			count = t.states[i].earlyHits
			maxEarly = i
		}
	}
	if !refine && idx >= 0 && t.states[idx].hits <= t.states[idx].misses && maxEarly >= 0 {
		idx = maxEarly
		durationUS = states[idx].TargetResidencyUS
	}
	if idx < 0 {
		idx = 0
	} else if idx > 0 {
		// A majority of recent idle periods shorter than the chosen
		// state's residency pulls the choice down to their average.
		n, sum := int64(0), int64(0)
		for _, v := range t.intervals {
			if v >= states[idx].TargetResidencyUS {
				continue
			}
			n++
			sum += v
		}
		if n > teoIntervals/2 {
			avg := sum / n
			if !(in.TickStopped && avg < in.TickUS) {
				idx = shallowerFitting(states, idx, avg)
				durationUS = avg
			}
		}
	}
	stopTick := true
	if (states[idx].Polling || durationUS < in.TickUS) && !in.TickStopped {
		stopTick = false
		if idx > 0 && states[idx].TargetResidencyUS > deltaTickUS {
			idx = shallowerFitting(states, idx, deltaTickUS)
		}
	}
	return idx, stopTick
}

// Reflect is teo_reflect(). ResidencyNS stands for the time from the
// selection to the reflect call (the engine selects and enters at the
// same instant).
func (t *TEO) Reflect(idx int, out Outcome) {
	t.lastState = idx
	if out.PollTimeLimit || (out.GotTick && t.sleepLengthNS > t.tickNS) {
		t.timeSpanNS = t.sleepLengthNS
	} else {
		t.timeSpanNS = out.ResidencyNS
	}
}
