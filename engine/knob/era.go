package knob

import (
	"fmt"
	"strings"
)

// Era is a whole kernel the engine can simulate: its pick/preempt/placement
// class, its wakeup path and its load balancer, with that version's own
// features.h defaults and sysctls. The era is itself a knob (EraKnob), so
// it travels with every other setting: CLI --set/--era, share links
// ("era=6.6", "b.era=2.6-o1"), presets, A/B arms, sweeps.
type Era int64

const (
	// Era52 is v5.2 CFS, the 2019 kernel of the select_idle_sibling
	// discussions (the default).
	Era52 Era = iota
	// EraO1 is the 2.6 O(1) scheduler of the 2004 SMT-nice machine.
	EraO1
	// Era66 is v6.6: EEVDF, SIS_UTIL, the v5.5 load balancer.
	Era66
	// Era61 is 6.1 (the Debian 12 kernel): CFS with the v6.x wakeup path
	// (SIS_UTIL) and the v5.5 load balancer.
	Era61
	// Era612 is 6.12 (Debian 13's kernel, and the 6.12.117 the oracle
	// boots): EEVDF with delayed dequeue, PREEMPT_SHORT and
	// PLACE_REL_DEADLINE, SIS_UTIL only, the v5.5 load balancer.
	Era612
	builtinEras
)

// eraNames are the era knob's values, in Era order (RegisterEra appends).
var eraNames = []string{"5.2", "2.6-o1", "6.6", "6.1", "6.12"}

// numEras is the number of eras, the built-in ones and the registered.
var numEras = builtinEras

func (e Era) String() string {
	if e >= 0 && e < numEras {
		return eraNames[e]
	}
	return fmt.Sprintf("era(%d)", int64(e))
}

// RegisterEra adds an era named name that has base's knobs with the given
// defaults changed: a variant of a kernel (one feature default flipped, a
// distribution's sysctls) in one call. The engine must be told which class
// runs it (engine.RegisterEra). Call it from an init function: eras are
// read without locks.
func RegisterEra(name string, base Era, defaults map[ID]int64) (Era, error) {
	if base < 0 || base >= numEras {
		return 0, fmt.Errorf("era %s: base era %d does not exist", name, int64(base))
	}
	for _, n := range eraNames {
		if strings.EqualFold(n, name) {
			return 0, fmt.Errorf("era %s exists already", name)
		}
	}
	rules := map[ID]eraRule{}
	for id, r := range eraRules[base] {
		rules[id] = r
	}
	for id, v := range defaults {
		if ok, why := Exists(id, base); !ok {
			return 0, fmt.Errorf("era %s: knob %s does not exist in era %s: %s", name, table[id].Name, base, why)
		}
		if _, err := table[id].Parse(table[id].Format(v)); err != nil {
			return 0, fmt.Errorf("era %s: default of %s: %v", name, table[id].Name, err)
		}
		rules[id] = eraRule{Default: v, HasDefault: true}
	}
	e := numEras
	eraNames = append(eraNames, name)
	eraRules = append(eraRules, rules)
	numEras++
	table[EraKnob].Values = eraNames
	table[EraKnob].Max = int64(numEras) - 1
	return e, nil
}

// Eras lists every era in order.
func Eras() []Era {
	out := make([]Era, numEras)
	for i := range out {
		out[i] = Era(i)
	}
	return out
}

// ParseEra reads an era name ("5.2", "2.6-o1", "6.6", "6.1", "6.12").
func ParseEra(s string) (Era, error) {
	x, err := table[EraKnob].Parse(s)
	if err != nil {
		return 0, err
	}
	return Era(x), nil
}

// eraRule is what an era changes about one knob: that the knob does not
// exist there (Absent, with the reason a user is told), or its default.
type eraRule struct {
	Absent  string // non-empty: the knob does not exist in the era; why
	Default int64  // the era's default when the knob exists (HasDefault)
	// HasDefault marks Default as set (a 0 default is meaningful).
	HasDefault bool
	// Value is what an absent knob reads as inside the engine, so that
	// code shared between eras behaves as if the feature were not there.
	Value int64
}

// eraRules holds, per era, the knobs that differ from the table (the v5.2
// defaults). A knob with no rule exists in the era with its table default.
var eraRules = []map[ID]eraRule{
	Era52:  {},
	EraO1:  {},
	Era66:  {},
	Era61:  {},
	Era612: {},
}

// absent marks ids as not existing in era e for the given reason. Inside
// the engine an absent feature reads as off, an absent number as its table
// value (shared code may still divide by it).
func absent(e Era, why string, ids ...ID) {
	for _, id := range ids {
		r := eraRule{Absent: why}
		if table[id].Kind != Bool {
			r.Value = table[id].Default
		}
		eraRules[e][id] = r
	}
}

// eraDefault sets id's default in era e.
func eraDefault(e Era, id ID, v int64) {
	eraRules[e][id] = eraRule{Default: v, HasDefault: true}
}

// Exists reports whether knob id exists in era e and, if not, why.
func Exists(id ID, e Era) (bool, string) {
	if id == EraKnob || e < 0 || e >= numEras {
		return true, ""
	}
	r, ok := eraRules[e][id]
	if ok && r.Absent != "" {
		return false, r.Absent
	}
	return true, ""
}

// DefaultIn is knob id's value in era e when the user sets nothing: the
// era's default, or what an absent knob reads as.
func DefaultIn(id ID, e Era) int64 {
	if id == EraKnob {
		return int64(e)
	}
	if e >= 0 && e < numEras {
		if r, ok := eraRules[e][id]; ok {
			if r.Absent != "" {
				return r.Value
			}
			if r.HasDefault {
				return r.Default
			}
		}
	}
	return table[id].Default
}

// DefaultsFor returns every knob at era e's defaults.
func DefaultsFor(e Era) Values {
	var v Values
	for i := range table {
		v.v[i] = DefaultIn(ID(i), e)
	}
	return v
}

// Era is the era these values select.
func (v *Values) Era() Era { return Era(v.v[EraKnob]) }

// KnobsOf lists the names of the knobs that exist in era e, in table order.
func KnobsOf(e Era) []string {
	var out []string
	for i := range table {
		if ok, _ := Exists(ID(i), e); ok {
			out = append(out, table[i].Name)
		}
	}
	return out
}

// notInEraError is the error for setting a knob its era does not have.
func notInEraError(id ID, e Era, why string) error {
	return fmt.Errorf("knob %s does not exist in era %s: %s (set era first, or use one of the era's knobs: see `schedsim knobs --era %s`)",
		table[id].Name, e, why, e)
}

// setEra switches v to era e. Knobs still at the old era's default move
// to the new era's; a knob the user changed keeps its value, unless the new
// era does not have it, which is an error naming it (and v is unchanged).
func (v *Values) setEra(e Era) error {
	old := v.Era()
	if e == old {
		return nil
	}
	var bad []string
	for i := range table {
		id := ID(i)
		if id == EraKnob || v.v[i] == DefaultIn(id, old) {
			continue
		}
		if ok, why := Exists(id, e); !ok {
			bad = append(bad, table[i].Name+" ("+why+")")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("era %s does not have knobs set here: %s", e, strings.Join(bad, "; "))
	}
	for i := range table {
		id := ID(i)
		if id == EraKnob {
			continue
		}
		if ok, _ := Exists(id, e); !ok || v.v[i] == DefaultIn(id, old) {
			v.v[i] = DefaultIn(id, e)
		}
	}
	v.v[EraKnob] = int64(e)
	return nil
}

// The eras' differences from v5.2. Each era's own features.h and sysctls
// decide these; the era's files in the engine cite the version followed.
func init() {
	// v6.6 (kernel/sched/features.h at v6.6): EEVDF replaced the
	// sleeper-credit and start-debit placement and the latency and wakeup
	// granularity sysctls (commit "sched/fair: Implement an EEVDF-like
	// scheduling policy", v6.6); SIS_AVG_CPU was removed in v5.12;
	// SIS_UTIL is on and SIS_PROP off by default since v6.0.
	absent(Era66, "removed in v5.12", SIS_AVG_CPU)
	absent(Era66, "replaced by EEVDF's lag-based placement in v6.6", GENTLE_FAIR_SLEEPERS, START_DEBIT)
	absent(Era66, "removed with EEVDF in v6.6 (slices come from sched_base_slice_ns)", SchedLatency, SchedWakeupGranularity)
	absent(Era66, "SMT nice belongs to the 2.6 O(1) scheduler (2004 patch)", SMT_NICE, PerCPUGain)
	const o1Only = "an O(1) scheduler tunable: it exists only in era 2.6-o1 (CFS replaced the timeslices in v2.6.23)"
	absent(Era52, o1Only, O1MinTimesliceMS, O1MaxTimesliceMS, O1StarvationLimitMS)
	absent(Era66, o1Only, O1MinTimesliceMS, O1MaxTimesliceMS, O1StarvationLimitMS)
	absent(Era66, "renamed sched_base_slice_ns in v6.6", SchedMinGranularity)
	absent(Era66, "a 2019 select_idle_cpu proposal on v5.2; v6.6's select_idle_cpu has none of it", SIS_BOUND, SIS_ROTATE, SIS_TARGET_CORE)
	absent(Era66, "a latency-nice proposal for CFS (2019-2023), not merged; v6.6 has EEVDF instead", LN_SEARCH, LN_PREEMPT, LN_SKIP_CORE)
	// features.h at v6.6 still has SIS_PROP, off by default (a later kernel
	// removed it); SIS_UTIL is on since v6.0.
	eraDefault(Era66, SIS_PROP, 0)
	eraDefault(Era66, SIS_UTIL, 1)

	// 6.1 (kernel/sched/features.h of Debian's 6.1.172): CFS's features
	// and sysctls, with the v6.x select_idle_sibling (SIS_UTIL on, SIS_PROP
	// off since v6.0; SIS_AVG_CPU removed in v5.12).
	absent(Era61, "removed in v5.12", SIS_AVG_CPU)
	absent(Era61, "SMT nice belongs to the 2.6 O(1) scheduler (2004 patch)", SMT_NICE, PerCPUGain)
	absent(Era61, o1Only, O1MinTimesliceMS, O1MaxTimesliceMS, O1StarvationLimitMS)
	absent(Era61, "a 2019 select_idle_cpu proposal on v5.2; 6.1's select_idle_cpu has none of it", SIS_BOUND, SIS_ROTATE, SIS_TARGET_CORE)
	absent(Era61, "a latency-nice proposal for CFS (2019-2023), not merged", LN_SEARCH, LN_PREEMPT, LN_SKIP_CORE)
	const baseSlice = "sched_slice's floor (BASE_SLICE) came in v6.0 and went with EEVDF in v6.6"
	absent(Era52, baseSlice, BASE_SLICE)
	absent(Era66, baseSlice, BASE_SLICE)
	absent(EraO1, baseSlice, BASE_SLICE)
	eraDefault(Era61, SIS_PROP, 0)
	eraDefault(Era61, SIS_UTIL, 1)

	// 6.12 (kernel/sched/features.h of Debian's 6.12.117,
	// docs/era612-research.md §1): 6.6's EEVDF knobs plus the 6.12
	// features; SIS_PROP is gone (select_idle_cpu has only SIS_UTIL);
	// sysctl_sched_base_slice is 0.70 ms (backport "sched: Reduce the
	// default slice to avoid tasks getting an extra tick", 6.12.32);
	// Debian builds it with CONFIG_HZ_250.
	absent(Era612, "removed before 6.12: select_idle_cpu has no SIS_PROP path, only SIS_UTIL", SIS_PROP)
	absent(Era612, "removed in v5.12", SIS_AVG_CPU)
	absent(Era612, "replaced by EEVDF's lag-based placement in v6.6", GENTLE_FAIR_SLEEPERS, START_DEBIT)
	absent(Era612, "removed with EEVDF in v6.6 (slices come from sched_base_slice_ns)", SchedLatency, SchedWakeupGranularity)
	absent(Era612, "SMT nice belongs to the 2.6 O(1) scheduler (2004 patch)", SMT_NICE, PerCPUGain)
	absent(Era612, o1Only, O1MinTimesliceMS, O1MaxTimesliceMS, O1StarvationLimitMS)
	absent(Era612, "renamed sched_base_slice_ns in v6.6", SchedMinGranularity)
	absent(Era612, "a 2019 select_idle_cpu proposal on v5.2; 6.12's select_idle_cpu has none of it", SIS_BOUND, SIS_ROTATE, SIS_TARGET_CORE)
	absent(Era612, "a latency-nice proposal for CFS (2019-2023), not merged; 6.12 has EEVDF's per-task slices instead", LN_SEARCH, LN_PREEMPT, LN_SKIP_CORE)
	absent(Era612, baseSlice, BASE_SLICE)
	eraDefault(Era612, SIS_UTIL, 1)
	eraDefault(Era612, SchedBaseSlice, 700000)
	eraDefault(Era612, HZ, 250)
	const eevdf612 = "an EEVDF feature new in 6.12 (features.h of 6.12.117): it exists only in era 6.12"
	for _, e := range []Era{Era52, EraO1, Era66, Era61} {
		absent(e, eevdf612, PICK_BUDDY, DELAY_DEQUEUE, DELAY_ZERO, PREEMPT_SHORT, PLACE_REL_DEADLINE)
		absent(e, "a 6.12.y backport (\"sched/fair: Proportional newidle balance\", Debian 6.12.69): it exists only in era 6.12", NI_RANDOM)
	}

	// The EEVDF features and base slice exist only from v6.6.
	const eevdf = "an EEVDF feature, new in v6.6"
	absent(Era52, eevdf, PLACE_LAG, PLACE_DEADLINE_INITIAL, RUN_TO_PARITY, SchedBaseSlice)
	absent(Era52, "modelled for the v6.6 class only (v5.2's NEXT_BUDDY, also off by default, is not modelled)", NEXT_BUDDY)
	absent(Era61, eevdf, PLACE_LAG, PLACE_DEADLINE_INITIAL, RUN_TO_PARITY, SchedBaseSlice)
	absent(Era61, "modelled for the v6.6 class only (CFS's NEXT_BUDDY, also off by default, is not modelled)", NEXT_BUDDY)
	absent(EraO1, eevdf, PLACE_LAG, PLACE_DEADLINE_INITIAL, RUN_TO_PARITY, SchedBaseSlice, NEXT_BUDDY)

	// 2.6 O(1): none of CFS's features, the 2019 select_idle_sibling
	// proposals, or the later wake_affine heuristics existed.
	const o1 = "the 2.6 O(1) scheduler has no such feature (it came with CFS or later)"
	absent(EraO1, o1, SIS_PROP, SIS_AVG_CPU, SIS_CORE, SIS_BOUND, SIS_ROTATE, SIS_TARGET_CORE, SIS_UTIL,
		LN_SEARCH, LN_PREEMPT, LN_SKIP_CORE, SHARED_RUNQ, SRQ_LLC_SHARD, SRQ_OVERLOAD, NUMA_BALANCING,
		WA_IDLE, WA_WEIGHT, WA_BIAS, GENTLE_FAIR_SLEEPERS, START_DEBIT, WAKEUP_PREEMPTION,
		SchedLatency, SchedMinGranularity, SchedWakeupGranularity, TunableScaling, ShardSize, NUMAScanDelayMS)
	// Linux 2.6.7 builds dependent_sleeper into every CONFIG_SCHED_SMT
	// kernel (kernel/sched.c 2.6.7): SMT nice is on unless a run models a
	// kernel without the patch (2.6.4-rc1-mm1, V3's HT arms).
	eraDefault(EraO1, SMT_NICE, 1)

	// The RT class: v5.2 shares RT runtime between CPUs by default;
	// 2.6.7 has neither RT bandwidth control (2.6.25) nor the sysctl RR
	// timeslice (its SCHED_RR slice is task_timeslice, from the nice).
	eraDefault(Era52, RT_RUNTIME_SHARE, 1)
	absent(EraO1, "RT bandwidth control came with 2.6.25; SCHED_RR's slice in 2.6.7 is task_timeslice", RT_RUNTIME_SHARE, SchedRTPeriodUS, SchedRTRuntimeUS, SchedRRTimesliceMS)
	absent(EraO1, "RT push/pull came with 2.6.25 (RT_PUSH_IPI with v4.6)", RT_PUSH_IPI)
}
