package cpuidle

// The menu governor of Linux 6.1 and 6.6 (drivers/cpuidle/governors/menu.c
// as Debian's linux-source-6.1 (6.1.192) ships it, and v6.6 = that text
// plus commit 5484e31bbbff "cpuidle: menu: Skip
// tick_nohz_get_sleep_length() call in some cases", merged for v6.6 and
// unchanged at 6.6.57). Paraphrased, no kernel text copied.
//
// What differs from v5.2's menu (menu.go) and is modelled:
//
//   - Nanoseconds (v5.5, "cpuidle: Use nanoseconds as the unit of time"):
//     the time to the next timer, the prediction, the state parameters,
//     the latency limit and the measured residency are compared in ns; the
//     prediction is still rounded to whole µs (next_timer_ns × factor /
//     (RESOLUTION·DECAY·1000), half rounded up), and the interval history
//     still holds µs (ktime_to_us of the measured ns, truncated to 32 bits).
//   - The state-0 shortcut (a timer before state 1 pays off, or a latency
//     limit below state 1's exit) lets the tick stop unless state 0 polls;
//     v5.2 always kept it.
//   - Breaking out of the state loop on the exit-latency limit no longer
//     replaces the prediction by the chosen state's target residency, so
//     the tick decision after the loop reads the prediction itself.
//   - get_typical_interval discards values above INT_MAX (v5.2: UINT_MAX)
//     and skips a candidate whose variance would overflow ×36.
//   - 6.6 only (RESIDENCY_THRESHOLD_NS, 15 µs, drivers/cpuidle/governors/
//     gov.h): the typical interval is computed first, with no prediction to
//     compare against (its "result would be discarded" early return is
//     gone); when it is at most 15 µs the governor does not look at the
//     timers at all: next_timer_ns is KTIME_MAX, the next tick is assumed
//     half a tick away and the correction bucket is the last one. So a CPU
//     with a short typical interval never takes the state-0 shortcut for a
//     close timer, prefers a physical state to POLL (any timer "fits"),
//     and, with the tick already stopped, replaces its short prediction by
//     KTIME_MAX and picks the deepest state the latency limit allows (the
//     behaviour commit 80606f4eb8d7 fixed upstream in 2025, after 6.6.57).
//     menu_update then folds a measured period against KTIME_MAX: it adds
//     ~0 to the last bucket's correction factor.
//
// What differs and is not modelled:
//
//   - The I/O-wait bucket and performance multiplier (still present in 6.1
//     and 6.6, removed later): the simulated tasks never wait for block
//     I/O, so nr_iowait_cpu is 0 as in v5.2's model.
//   - menu_select recording UINT_MAX when the driver rejected the previous
//     state (last_residency_ns == 0): the simulated driver never rejects.
//   - The 6.x cpuidle core around the governor (poll_idle's limit from
//     cpuidle_poll_time, the governor's latency request in ns) is the same
//     as v5.2's here up to the unit.

const (
	// residencyThresholdNS is RESIDENCY_THRESHOLD_NS (6.6 gov.h).
	residencyThresholdNS = 15 * 1000
	menuMaxInterestingNS = menuMaxInteresting * 1000
	ktimeMax             = 1<<63 - 1 // KTIME_MAX
	intMax               = 1<<31 - 1 // INT_MAX
)

// MenuVersion names whose menu.c a menu governor runs.
type MenuVersion int

const (
	Menu52 MenuVersion = iota // v5.2 (menu.go)
	Menu61                    // 6.1: nanoseconds, the 6.x shortcut and tick rules
	Menu66                    // 6.6: 6.1 plus the RESIDENCY_THRESHOLD_NS skip
)

// typicalInterval6x is 6.x's get_typical_interval, in µs. early is 6.1's
// test against the prediction it was given (gone in 6.6, which has none
// yet).
func (m *Menu) typicalInterval6x(early bool, predictedUS int64) int64 {
	thresh := int64(intMax)
	for {
		sum, divisor, minV, maxV := m.intervalsUpTo(thresh)
		if early && minV >= predictedUS {
			return uintMax
		}
		if divisor == 0 {
			return uintMax // every sample above INT_MAX (the kernel would divide by 0)
		}
		avg := sum / divisor
		var variance uint64
		for _, v := range m.intervals {
			if v <= thresh {
				d := v - avg
				variance += uint64(d * d)
			}
		}
		variance /= uint64(divisor)
		if variance <= ^uint64(0)/36 {
			a := uint64(avg)
			if (a*a > variance*36 && divisor*4 >= menuIntervals*3) || variance <= 400 {
				return avg
			}
		}
		if divisor*4 <= menuIntervals*3 {
			return uintMax
		}
		thresh = maxV - 1
	}
}

// timerPredictionUS is the time to the next timer scaled by the bucket's
// correction factor, in whole µs, half rounded up.
func (m *Menu) timerPredictionUS() int64 {
	const scale = menuResolution * menuDecay * 1000
	return (m.nextTimerNS*m.correction[m.bucket] + scale/2) / scale
}

// select6x is 6.1's and 6.6's menu_select.
func (m *Menu) select6x(states []State, in Input) (int, bool) {
	tickNS := in.TickUS * 1000
	if m.needsUpdate {
		m.update6x(states, tickNS)
		m.needsUpdate = false
	}
	latencyReq := in.LatencyReqUS * 1000
	var predicted, deltaTick int64 // ns
	if m.v == Menu66 {
		predicted = m.typicalInterval6x(false, 0) * 1000
		if predicted > residencyThresholdNS {
			m.nextTimerNS, deltaTick = in.SleepLengthNS, in.DeltaNextNS
			m.bucket = whichBucket(m.nextTimerNS / 1000)
			predicted = min(m.timerPredictionUS()*1000, predicted)
		} else {
			// The timers are not looked at: the closest one is taken
			// to be far away, the tick half a period away.
			m.nextTimerNS, deltaTick = ktimeMax, tickNS/2
			m.bucket = whichBucket(ktimeMax / 1000)
		}
	} else {
		m.nextTimerNS, deltaTick = in.SleepLengthNS, in.DeltaNextNS
		m.bucket = whichBucket(m.nextTimerNS / 1000)
	}

	if len(states) <= 1 || latencyReq == 0 ||
		((m.nextTimerNS < states[1].TargetResidencyUS*1000 || latencyReq < states[1].ExitLatencyUS*1000) && !states[0].Disabled) {
		// State 0 will be used anyway; the tick is kept only for a
		// polling state 0.
		return 0, !states[0].Polling
	}
	if m.v == Menu61 {
		p := m.timerPredictionUS()
		predicted = min(p, m.typicalInterval6x(true, p)) * 1000
	}

	if in.TickStopped {
		if predicted < tickNS {
			predicted = m.nextTimerNS
		}
	} else {
		latencyReq = min(latencyReq, predicted) // performance multiplier 1: no I/O waiters
	}

	idx := -1
	for i, s := range states {
		if s.Disabled {
			continue
		}
		if idx == -1 {
			idx = i
		}
		target := s.TargetResidencyUS * 1000
		if target > predicted {
			if states[idx].Polling && s.ExitLatencyUS*1000 <= latencyReq && target <= m.nextTimerNS {
				predicted = target
				idx = i
				break
			}
			if predicted < tickNS {
				break
			}
			if !in.TickStopped {
				predicted = states[idx].TargetResidencyUS * 1000
				break
			}
			if states[idx].TargetResidencyUS*1000 < tickNS && target <= deltaTick {
				idx = i
			}
			return idx, true
		}
		if s.ExitLatencyUS*1000 > latencyReq {
			break // 6.x keeps the prediction (v5.2 took the state's residency)
		}
		idx = i
	}
	if idx == -1 {
		idx = 0
	}
	stopTick := true
	if (states[idx].Polling || predicted < tickNS) && !in.TickStopped {
		stopTick = false
		if idx > 0 && states[idx].TargetResidencyUS*1000 > deltaTick {
			// residency·1000 ≤ deltaTick ⟺ residency ≤ ⌊deltaTick/1000⌋
			idx = shallowerFitting(states, idx, deltaTick/1000)
		}
	}
	return idx, stopTick
}

// update6x is 6.x's menu_update, in ns.
func (m *Menu) update6x(states []State, tickNS int64) {
	target := states[min(m.lastStateIdx, len(states)-1)]
	var measured int64
	switch {
	case m.tickWakeup && m.nextTimerNS > tickNS:
		measured = 9 * menuMaxInterestingNS / 10
	case target.Polling && m.pollTimeLimit:
		measured = m.nextTimerNS // KTIME_MAX when 6.6 did not look
	default:
		measured = m.lastResidencyNS
		exit := target.ExitLatencyUS * 1000
		if measured > 2*exit {
			measured -= exit
		} else {
			measured /= 2
		}
	}
	measured = min(measured, m.nextTimerNS)
	m.learn(measured, m.nextTimerNS, menuMaxInterestingNS)

	// intervals[] is unsigned int: ktime_to_us of KTIME_MAX wraps.
	m.intervals[m.intervalPtr] = int64(uint32(measured / 1000))
	m.intervalPtr = (m.intervalPtr + 1) % menuIntervals
}
