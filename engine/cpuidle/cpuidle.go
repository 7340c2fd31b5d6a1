// Package cpuidle models how Linux v5.2 chooses an idle state for a CPU
// that has nothing to run: the cpuidle governors menu and teo, and "none"
// (always the shallowest state, as a machine without a cpuidle driver or
// with idle=halt does). It is pure logic with no notion of tasks: the
// engine tells a governor how far away the next timer is when a CPU goes
// idle, and how long the CPU stayed idle when it wakes, exactly as
// cpuidle_select() and cpuidle_reflect() do in the kernel.
//
// The governors work in microseconds with the kernel's integer arithmetic
// (ktime_to_us truncation, DIV_ROUND_CLOSEST), so a trace of selections can
// be compared with the kernel's line by line. Sources, paraphrased (no
// kernel text is copied): drivers/cpuidle/governors/menu.c and teo.c,
// drivers/cpuidle/poll_state.c, kernel/sched/idle.c and
// kernel/time/tick-sched.c of Linux 5.2.1 (mirror
// wangliang-cs/linux-5.2.1, commit fc4ec72ddfe7848ad451612b56fc6429879e8d7e).
package cpuidle

import "fmt"

// State is one idle state as the governor sees it: what the driver
// declares (ACPI _CST, the intel_idle tables), not what the hardware does.
type State struct {
	Name string
	// ExitLatencyUS and TargetResidencyUS are the declared values
	// (struct cpuidle_state exit_latency and target_residency).
	ExitLatencyUS     int64
	TargetResidencyUS int64
	// Polling marks the POLL state (CPUIDLE_FLAG_POLLING): the CPU spins
	// on its need_resched flag, so a waker needs no IPI.
	Polling bool
	// Disabled is the sysfs "disable" switch: the state stays registered
	// (and still counts in menu's state[1] shortcut) but is never chosen.
	Disabled bool
}

// Input is what cpuidle_select() learns from the tick code when the CPU
// enters idle (tick_nohz_get_sleep_length and friends).
type Input struct {
	// SleepLengthNS is the time until the next timer event if the tick
	// were stopped (tick_nohz_get_sleep_length's return value).
	SleepLengthNS int64
	// DeltaNextNS is the time until the next event counting the tick if it
	// keeps running (its delta_next output).
	DeltaNextNS int64
	// TickStopped is tick_nohz_tick_stopped(): an earlier selection in
	// this idle period already stopped the tick.
	TickStopped bool
	// LatencyReqUS is cpuidle_governor_latency_req(): the PM QoS CPU/DMA
	// latency limit (NoLatencyLimit when nobody asked for one).
	LatencyReqUS int64
	// TickUS is TICK_USEC (1000000/HZ).
	TickUS int64
}

// NoLatencyLimit is PM_QOS_CPU_DMA_LAT_DEFAULT_VALUE (2000 s) in µs.
const NoLatencyLimit = 2000 * 1000 * 1000

// Outcome is how an idle period ended, as cpuidle_reflect() and the next
// selection see it.
type Outcome struct {
	// ResidencyNS is the time from entering the state to running again
	// (dev->last_residency; it includes the hardware exit time).
	ResidencyNS int64
	// GotTick: the period was ended by the scheduler tick
	// (tick_nohz_idle_got_tick).
	GotTick bool
	// PollTimeLimit: the POLL state gave up after its time limit
	// (dev->poll_time_limit).
	PollTimeLimit bool
}

// Governor chooses idle states for one CPU.
type Governor interface {
	// Select returns the index of the state to enter and whether the tick
	// may be stopped.
	Select(states []State, in Input) (idx int, stopTick bool)
	// Reflect reports how the idle period begun by the last Select ended.
	Reflect(idx int, out Outcome)
}

// Kind names a governor.
type Kind int

const (
	KindMenu Kind = iota
	KindTEO
	KindNone
)

// Names lists the governor names by Kind.
var Names = []string{"menu", "teo", "none"}

// New returns a governor of kind k for a CPU whose machine has been up for
// a long time with nothing to do: each governor starts in the state a long
// quiet period leaves it in (see each constructor).
// menu is whose menu.c a KindMenu governor runs.
func New(k Kind, menu MenuVersion, quietUS int64) Governor {
	switch k {
	case KindMenu:
		return NewMenuVersion(menu, quietUS)
	case KindTEO:
		return NewTEO()
	case KindNone:
		return &None{}
	}
	panic(fmt.Sprintf("cpuidle: unknown governor kind %d", k))
}

// PollLimitNS is how long the POLL state spins before it gives up and lets
// the governor choose again (poll_idle: the target residency of the first
// enabled state after POLL, or a tick when there is none).
func PollLimitNS(states []State, idx int, tickNS int64) int64 {
	for i := idx + 1; i < len(states); i++ {
		if !states[i].Disabled {
			return states[i].TargetResidencyUS * 1000
		}
	}
	return tickNS
}

// firstEnabled returns the shallowest enabled state, or 0.
func firstEnabled(states []State) int {
	for i, s := range states {
		if !s.Disabled {
			return i
		}
	}
	return 0
}

// shallowerFitting walks down from idx to the deepest enabled shallower
// state whose target residency fits us (the last one tried when none
// fits): menu's tick-retained correction and teo_find_shallower_state.
func shallowerFitting(states []State, idx int, us int64) int {
	for i := idx - 1; i >= 0; i-- {
		if states[i].Disabled {
			continue
		}
		idx = i
		if states[i].TargetResidencyUS <= us {
			break
		}
	}
	return idx
}

// None always picks the shallowest enabled state and lets the tick stop,
// like a kernel without a cpuidle driver (default_idle_call: HLT, or the
// polling loop of idle=poll).
type None struct{}

// Select implements Governor.
func (*None) Select(states []State, _ Input) (int, bool) { return firstEnabled(states), true }

// Reflect implements Governor.
func (*None) Reflect(int, Outcome) {}
