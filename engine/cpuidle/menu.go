package cpuidle

// The menu governor of Linux 5.2 (drivers/cpuidle/governors/menu.c at
// fc4ec72d): the predicted idle time is the time to the next timer scaled
// by a per-bucket correction factor, capped by the "typical interval" of
// the last 8 idle periods when they are regular enough; the deepest state
// whose target residency fits the prediction and whose declared exit
// latency fits the latency limit is chosen. The measured idle time fed
// back excludes the declared exit latency.
//
// Eras 6.1 and 6.6 run the menu of their own kernels instead (menu6x.go,
// chosen by MenuVersion): see there for each difference modelled and not.

const (
	menuBuckets        = 12 // BUCKETS (6 without and 6 with I/O waiters)
	menuIntervalShift  = 3
	menuIntervals      = 1 << menuIntervalShift // INTERVALS
	menuResolution     = 1024                   // RESOLUTION
	menuDecay          = 8                      // DECAY
	menuMaxInteresting = 50000                  // MAX_INTERESTING, µs
	uintMax            = 1<<32 - 1              // UINT_MAX
)

// Menu is struct menu_device, one per CPU.
type Menu struct {
	// v is whose menu.c this is (v5.2's unless NewMenuVersion says).
	v MenuVersion
	// nextTimerNS is 6.x's data->next_timer_ns (KTIME_MAX when 6.6
	// skipped looking at the timers); v5.2 keeps nextTimerUS.
	nextTimerNS  int64
	lastStateIdx int
	needsUpdate  bool
	tickWakeup   bool
	// From the device: the last residency and whether POLL timed out.
	lastResidencyUS int64
	lastResidencyNS int64 // 6.x's dev->last_residency_ns
	pollTimeLimit   bool

	nextTimerUS int64
	bucket      int
	correction  [menuBuckets]int64
	intervals   [menuIntervals]int64
	intervalPtr int
}

// NewMenu returns a menu device after a long quiet period: unit correction
// factors (menu_enable_device) and the last eight idle periods each
// quietUS long, i.e. the CPU slept until its timers every time. (A freshly
// enabled device has zeros there, which would make the first selections
// predict 0 µs; a server that has been idle for a while has not.)
func NewMenu(quietUS int64) *Menu { return NewMenuVersion(Menu52, quietUS) }

// NewMenuVersion is NewMenu for the menu.c of kernel v.
func NewMenuVersion(v MenuVersion, quietUS int64) *Menu {
	m := &Menu{v: v}
	for i := range m.correction {
		m.correction[i] = menuResolution * menuDecay
	}
	for i := range m.intervals {
		m.intervals[i] = min(quietUS, uintMax)
	}
	return m
}

// whichBucket is which_bucket() without I/O waiters (the simulated tasks
// never wait for block I/O).
func whichBucket(durationUS int64) int {
	switch {
	case durationUS < 10:
		return 0
	case durationUS < 100:
		return 1
	case durationUS < 1000:
		return 2
	case durationUS < 10000:
		return 3
	case durationUS < 100000:
		return 4
	}
	return 5
}

// intervalsUpTo sums the recorded idle periods no longer than thresh and
// gives their count, smallest and largest (both versions of
// get_typical_interval start each round with this).
func (m *Menu) intervalsUpTo(thresh int64) (sum, divisor, minV, maxV int64) {
	minV = uintMax
	for _, v := range m.intervals {
		if v <= thresh {
			sum += v
			divisor++
			maxV = max(maxV, v)
			minV = min(minV, v)
		}
	}
	return sum, divisor, minV, maxV
}

// typicalInterval is get_typical_interval(): the mean of the last eight
// idle periods if their spread is small (stddev ≤ 20 µs, or mean > 6
// stddev with at least 6 samples), discarding the largest values as
// outliers one by one down to six samples; uintMax when there is no
// pattern.
func (m *Menu) typicalInterval(predictedUS int64) int64 {
	thresh := int64(uintMax)
	for {
		sum, divisor, minV, maxV := m.intervalsUpTo(thresh)
		// The result would be discarded by the caller's min() anyway.
		if minV >= predictedUS {
			return uintMax
		}
		avg := sum / divisor
		variance := int64(0)
		for _, v := range m.intervals {
			if v <= thresh {
				d := v - avg
				variance += d * d
			}
		}
		variance /= divisor
		if (avg*avg > variance*36 && divisor*4 >= menuIntervals*3) || variance <= 400 {
			return avg
		}
		if divisor*4 <= menuIntervals*3 {
			return uintMax
		}
		thresh = maxV - 1
	}
}

// Select is menu_select().
func (m *Menu) Select(states []State, in Input) (int, bool) {
	if m.v != Menu52 {
		return m.select6x(states, in)
	}
	if m.needsUpdate {
		m.update(states, in.TickUS)
		m.needsUpdate = false
	}
	m.nextTimerUS = in.SleepLengthNS / 1000
	deltaNextUS := in.DeltaNextNS / 1000
	m.bucket = whichBucket(m.nextTimerUS)
	latencyReq := in.LatencyReqUS

	if len(states) <= 1 || latencyReq == 0 ||
		((m.nextTimerUS < states[1].TargetResidencyUS || latencyReq < states[1].ExitLatencyUS) && !states[0].Disabled) {
		// State 0 will be used no matter what: keep the tick.
		return 0, false
	}

	// DIV_ROUND_CLOSEST of next_timer × correction / (RESOLUTION·DECAY).
	const scale = menuResolution * menuDecay
	predicted := (m.nextTimerUS*m.correction[m.bucket] + scale/2) / scale
	predicted = min(predicted, m.typicalInterval(predicted))

	if in.TickStopped {
		// A shallow misprediction costs more with the tick stopped: use
		// the time to the next timer instead.
		if predicted < in.TickUS {
			predicted = deltaNextUS
		}
	} else if latencyReq > predicted {
		// interactivity_req: the performance multiplier is 1 without I/O
		// waiters.
		latencyReq = predicted
	}

	idx := -1
	for i, s := range states {
		if s.Disabled {
			continue
		}
		if idx == -1 {
			idx = i
		}
		if s.TargetResidencyUS > predicted {
			// Use a physical state rather than polling unless a timer is
			// due before this state would pay off.
			if states[idx].Polling && s.ExitLatencyUS <= latencyReq && s.TargetResidencyUS <= m.nextTimerUS {
				predicted = s.TargetResidencyUS
				idx = i
				break
			}
			if predicted < in.TickUS {
				break
			}
			if !in.TickStopped {
				// A shallow state with the tick kept: waking early is
				// harmless, the governor runs again at the tick.
				predicted = states[idx].TargetResidencyUS
				break
			}
			if states[idx].TargetResidencyUS < in.TickUS && s.TargetResidencyUS <= deltaNextUS {
				idx = i
			}
			return idx, true
		}
		if s.ExitLatencyUS > latencyReq {
			predicted = states[idx].TargetResidencyUS
			break
		}
		idx = i
	}
	if idx == -1 {
		idx = 0
	}
	stopTick := true
	if (states[idx].Polling || predicted < in.TickUS) && !in.TickStopped {
		stopTick = false
		if idx > 0 && states[idx].TargetResidencyUS > deltaNextUS {
			// The tick stays: do not pick a state the tick will cut short.
			idx = shallowerFitting(states, idx, deltaNextUS)
		}
	}
	return idx, stopTick
}

// Reflect is menu_reflect() plus the device fields menu_update() reads.
func (m *Menu) Reflect(idx int, out Outcome) {
	m.lastStateIdx = idx
	m.needsUpdate = true
	m.tickWakeup = out.GotTick
	m.lastResidencyUS = min(out.ResidencyNS/1000, 1<<31-1)
	m.lastResidencyNS = out.ResidencyNS
	m.pollTimeLimit = out.PollTimeLimit
}

// update is menu_update(): fold the measured idle time (without the
// declared exit latency) into the bucket's correction factor and the
// interval history.
func (m *Menu) update(states []State, tickUS int64) {
	target := states[min(m.lastStateIdx, len(states)-1)]
	var measured int64
	switch {
	case m.tickWakeup && m.nextTimerUS > tickUS:
		// The tick woke a CPU that expected a longer sleep: assume it
		// could have slept long (but not forever).
		measured = 9 * menuMaxInteresting / 10
	case target.Polling && m.pollTimeLimit:
		// POLL gave up on its time limit: a better prediction would
		// have slept until the next timer.
		measured = m.nextTimerUS
	default:
		measured = m.lastResidencyUS
		// The residency includes the exit; we want when the wakeup
		// began. Shorter than twice the exit latency: the state was
		// probably never reached.
		if measured > 2*target.ExitLatencyUS {
			measured -= target.ExitLatencyUS
		} else {
			measured /= 2
		}
	}
	measured = min(measured, m.nextTimerUS)
	m.learn(measured, m.nextTimerUS, menuMaxInteresting)
	m.intervals[m.intervalPtr] = measured
	m.intervalPtr = (m.intervalPtr + 1) % menuIntervals
}

// learn decays the bucket's correction factor and adds this period's
// measured/expected ratio (both menu_update versions; the arithmetic is
// the same in µs, v5.2, and ns, 6.x: the caller passes its unit).
func (m *Menu) learn(measured, nextTimer, maxInteresting int64) {
	f := m.correction[m.bucket]
	f -= f / menuDecay
	if nextTimer > 0 && measured < maxInteresting {
		f += menuResolution * measured / nextTimer
	} else {
		f += menuResolution // idle so long that it counts as a perfect prediction
	}
	m.correction[m.bucket] = f
}

// Predicted returns the menu's current correction factor for bucket b and
// its interval history (for tests and the inspector).
func (m *Menu) Predicted() (correction [menuBuckets]int64, intervals [menuIntervals]int64) {
	return m.correction, m.intervals
}
