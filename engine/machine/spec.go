// Package machine describes a simulated machine (sockets, LLCs, cores,
// hardware threads, CPU numbering, SMT throughput, idle states) and derives
// from it everything the scheduler looks at: sibling and LLC masks, the
// scheduling-domain hierarchy of each CPU, and distance classes.
package machine

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Limits on machine size. They keep a hostile share link or preset from
// allocating without bound; the largest seed machine has 512 CPUs.
const (
	MaxCPUs           = 2048
	MaxThreadsPerCore = 8
	MaxIdleStates     = 8
)

// Numbering schemes for logical CPU ids.
const (
	// Interleaved is the x86/AMD enumeration: first thread of every core,
	// socket by socket, then the second thread of every core, so CPU n and
	// n + (number of cores) are SMT siblings.
	Interleaved = "interleaved"
	// Contiguous is the POWER/SPARC enumeration: the threads of one core are
	// consecutive (core k owns CPUs k*T .. k*T+T-1).
	Contiguous = "contiguous"
)

// Spec is a machine as written in a preset file.
type Spec struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"` // "machine"
	Title  string   `json:"title"`
	Source string   `json:"source"`
	Notes  []string `json:"notes"`
	// Base names the machine preset a custom machine was derived from:
	// the parser fills every field the document does not give from that
	// preset (presets.ParseMachine, README "Your machine"). A parsed Spec
	// keeps the name for the record; its fields are already complete.
	Base string `json:"base,omitempty"`

	Topology TopologySpec `json:"topology"`
	// SMTThroughput[k-1] is the total throughput of a core with k busy
	// threads, in units of one thread running alone (P4: [1.0, 1.15]).
	SMTThroughput []float64 `json:"smt_throughput"`
	// IdleStates lists the CPU's idle (C-) states from shallowest to deepest.
	IdleStates []IdleState `json:"idle_states"`
	// IdleDriver is "" for a cpuidle driver (intel_idle, acpi_idle,
	// powernv) whose states the cpuidle_governor knob chooses among, or
	// "none" for a kernel without one (sun4v's hypervisor yield, 2.6-era
	// default_idle's HLT): default_idle_call always uses the first state
	// and stops the tick.
	IdleDriver string `json:"idle_driver"`
	// Cache gives the cache sizes the migration refill model uses.
	Cache CacheSpec `json:"cache"`
	// Costs overrides knob defaults (cost parameters) for this machine,
	// keyed by knob name.
	Costs map[string]int64 `json:"costs"`
	// CostNotes says where each cost value comes from, keyed like Costs.
	CostNotes map[string]string `json:"cost_notes"`

	// NUMADistance is the firmware's node-distance table (ACPI SLIT, or
	// what the architecture's node_distance() computes), one node per
	// socket: NUMADistance[i][j] is node_distance(i, j), LOCAL_DISTANCE
	// (10) on the diagonal. nil means unknown: a multi-socket machine then
	// gets REMOTE_DISTANCE (20) between its nodes, the kernel's generic
	// node_distance (include/linux/topology.h, v5.2), and a single-socket
	// one needs none.
	NUMADistance [][]int `json:"numa_distance"`
	// NUMADistanceNote says where the table comes from (doc:, measured:,
	// spec: or assumed:); required with a table.
	NUMADistanceNote string `json:"numa_distance_note"`
	// ReclaimDistance is the architecture's RECLAIM_DISTANCE when it
	// defines its own (10 on powerpc, arch/powerpc/include/asm/topology.h
	// in v5.2 and 6.12); 0 is the generic 30 (include/linux/topology.h).
	ReclaimDistance int `json:"reclaim_distance"`
	// NodeReclaimDistance is what the architecture's boot code sets the
	// variable node_reclaim_distance to from v5.4 on (32 on AMD Zen:
	// init_amd_zn in v5.4, init_amd_zen_common in 6.1.y and 6.12); 0 leaves
	// it at RECLAIM_DISTANCE. v5.2 has no such variable.
	NodeReclaimDistance int `json:"node_reclaim_distance"`
	// ReclaimDistanceNote says where ReclaimDistance and
	// NodeReclaimDistance come from; required when either is set.
	ReclaimDistanceNote string `json:"reclaim_distance_note"`
}

// NUMA distances of the kernel's generic topology (include/linux/topology.h:
// LOCAL_DISTANCE, REMOTE_DISTANCE, RECLAIM_DISTANCE, v5.2 and 6.x) and the
// SLIT's largest entry (a byte; 255 means unreachable).
const (
	LocalDistance   = 10
	RemoteDistance  = 20
	ReclaimDistance = 30
	MaxDistance     = 255
)

// NodeDistance is node_distance(a, b) between the nodes of sockets a and b:
// the table's entry, or LOCAL_DISTANCE / REMOTE_DISTANCE without one.
func (s *Spec) NodeDistance(a, b int) int {
	if len(s.NUMADistance) > a && len(s.NUMADistance[a]) > b {
		return s.NUMADistance[a][b]
	}
	if a == b {
		return LocalDistance
	}
	return RemoteDistance
}

// MaxNodeDistance is the largest distance between two nodes of the machine
// (LOCAL_DISTANCE on one socket): sched_init_numa's last distance, the one
// of the NUMA level that spans the machine.
func (s *Spec) MaxNodeDistance() int {
	d := LocalDistance
	for a := 0; a < s.Topology.Sockets; a++ {
		for b := 0; b < s.Topology.Sockets; b++ {
			d = max(d, s.NodeDistance(a, b))
		}
	}
	return d
}

// RecDistance is the architecture's RECLAIM_DISTANCE.
func (s *Spec) RecDistance() int {
	if s.ReclaimDistance > 0 {
		return s.ReclaimDistance
	}
	return ReclaimDistance
}

// TopologySpec is the shape of the machine.
type TopologySpec struct {
	Sockets        int `json:"sockets"`
	CoresPerSocket int `json:"cores_per_socket"`
	ThreadsPerCore int `json:"threads_per_core"`
	// CoresPerLLC is the span of the last-level cache (sd_llc) in cores.
	CoresPerLLC int `json:"cores_per_llc"`
	// LLCsPerCCD groups LLCs into dies (AMD CCDs); 0 or 1 means no grouping.
	// It is not a scheduling domain (as on Zen4c); it only names the die.
	LLCsPerCCD int    `json:"llcs_per_ccd"`
	Numbering  string `json:"numbering"`
}

// IdleState is one idle state as the kernel registers it: what the driver
// declares to the governor (exit latency and target residency, from the
// intel_idle tables or ACPI _CST) and what leaving it really costs.
type IdleState struct {
	Name string `json:"name"`
	// ExitLatencyUS and TargetResidencyUS are the declared values the
	// cpuidle governor reasons with.
	ExitLatencyUS     int64 `json:"exit_latency_us"`
	TargetResidencyUS int64 `json:"target_residency_us"`
	// MeasuredExitNS is what a wakeup from this state really pays, from
	// the interrupt to the first instruction (public measurements; some
	// firmware declares far more than the hardware needs, e.g. AMD's C2
	// at 400 µs for a 20-25 µs exit). 0 means "as declared".
	MeasuredExitNS int64 `json:"measured_exit_ns"`
	// Polling marks the POLL state: the CPU spins on its need_resched
	// flag, so a waker needs no IPI and there is no exit to pay.
	Polling bool `json:"polling"`
	// Disabled is the sysfs disable switch (or a BIOS that hides the
	// state): registered, never chosen.
	Disabled bool `json:"disabled"`
	// CoreLevel states (C3/C6 on Intel, CC6 on AMD) need every SMT
	// sibling idle: while a sibling runs, the core stays powered and a
	// wakeup pays only the shallowest non-polling state's exit.
	CoreLevel bool `json:"core_level"`
	// Entry is how the CPU enters the state, which decides how a waker
	// reaches it (one of the Entry* constants; "" is EntryHLT's rule, the
	// safe default for a custom machine).
	Entry string `json:"entry"`
}

// How a CPU enters an idle state. What matters to the scheduler is whether
// the idle CPU has TIF_POLLING_NRFLAG set while in the state: then a
// waker's set_nr_and_not_polling (kernel/sched/core.c) only stores to the
// CPU's thread flags and sends no IPI, and the store itself ends the wait.
const (
	// EntryPoll is the POLL state (poll_idle, drivers/cpuidle/poll_state.c):
	// a loop on need_resched with polling set.
	EntryPoll = "poll"
	// EntryMWAIT is MONITOR/MWAIT on the thread flags: intel_idle's states
	// and ACPI FFH states (acpi_processor_ffh_cstate_enter) both end in
	// mwait_idle_with_hints (arch/x86/include/asm/mwait.h), which sets
	// polling with current_set_polling_and_test before MONITOR, so the
	// waker's store to the monitored line wakes the CPU without an IPI.
	EntryMWAIT = "mwait"
	// EntryHLT is HLT (default_idle, ACPI "C1 HLT"): polling is cleared
	// (call_cpuidle's current_clr_polling_and_test), only an interrupt
	// wakes the CPU.
	EntryHLT = "hlt"
	// EntryIOPort is an ACPI SYSTEM_IO state (acpi_idle_do_entry's inb of
	// the P_LVL port): interrupt-driven, as HLT.
	EntryIOPort = "io"
	// EntryStop is POWER9's stop instruction (cpuidle-powernv stop_loop):
	// interrupt-driven (a doorbell), as HLT.
	EntryStop = "stop"
	// EntryYield is a hypervisor yield (sun4v cpu_yield): interrupt-driven.
	EntryYield = "yield"
)

// Entries lists the allowed Entry values.
var Entries = []string{EntryPoll, EntryMWAIT, EntryHLT, EntryIOPort, EntryStop, EntryYield}

// WokenByStore reports whether a waker reaches a CPU in this state by the
// store to its need_resched flag alone (POLL and MWAIT states), with no
// IPI.
func (st IdleState) WokenByStore() bool {
	return st.Polling || st.Entry == EntryPoll || st.Entry == EntryMWAIT
}

// ExitNS is the time a wakeup from the state really costs.
func (st IdleState) ExitNS() int64 {
	if st.Polling {
		return 0
	}
	if st.MeasuredExitNS > 0 {
		return st.MeasuredExitNS
	}
	return st.ExitLatencyUS * 1000
}

// CacheSpec is the part of the cache hierarchy a migrating task loses:
// the caches private to its core (L1D+L2 on x86, shared by the core's SMT
// threads; only L1D on POWER9, whose L2 belongs to the core pair) when it
// changes core, and the LLC when it changes LLC. Zero means unknown:
// PrivateKiB and LLCKiB then give a generic server's 512 KiB per core and
// 2 MiB of LLC per core.
type CacheSpec struct {
	CorePrivateKB int64 `json:"core_private_kb"`
	LLCKB         int64 `json:"llc_kb"`
}

// PrivateKiB is the cache private to one core.
func (s *Spec) PrivateKiB() int64 {
	if s.Cache.CorePrivateKB > 0 {
		return s.Cache.CorePrivateKB
	}
	return 512
}

// LLCKiB is the size of one LLC.
func (s *Spec) LLCKiB() int64 {
	if s.Cache.LLCKB > 0 {
		return s.Cache.LLCKB
	}
	return 2048 * int64(s.Topology.CoresPerLLC)
}

// IdleDriverNone marks a machine without a cpuidle driver.
const IdleDriverNone = "none"

// FieldError names a bad field of a spec, its value and what is allowed.
type FieldError struct {
	Field   string
	Value   any
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("field %s: bad value %v (allowed: %s)", e.Field, e.Value, e.Allowed)
}

// NumCPUs is the number of logical CPUs the spec describes.
func (s *Spec) NumCPUs() int {
	t := s.Topology
	return t.Sockets * t.CoresPerSocket * t.ThreadsPerCore
}

// Validate checks every field against its allowed range. It does not know
// knob names; the caller checks Costs keys.
func (s *Spec) Validate() error {
	t := s.Topology
	if s.Name == "" {
		return &FieldError{"name", `""`, "a non-empty preset name"}
	}
	if t.Sockets < 1 || t.Sockets > 64 {
		return &FieldError{"topology.sockets", t.Sockets, "1..64"}
	}
	if t.CoresPerSocket < 1 || t.CoresPerSocket > MaxCPUs {
		return &FieldError{"topology.cores_per_socket", t.CoresPerSocket, fmt.Sprintf("1..%d", MaxCPUs)}
	}
	if t.ThreadsPerCore < 1 || t.ThreadsPerCore > MaxThreadsPerCore {
		return &FieldError{"topology.threads_per_core", t.ThreadsPerCore, fmt.Sprintf("1..%d", MaxThreadsPerCore)}
	}
	if n := t.Sockets * t.CoresPerSocket * t.ThreadsPerCore; n > MaxCPUs {
		return &FieldError{"topology", fmt.Sprintf("%d CPUs", n), fmt.Sprintf("at most %d CPUs (sockets × cores_per_socket × threads_per_core)", MaxCPUs)}
	}
	if t.CoresPerLLC < 1 || t.CoresPerLLC > t.CoresPerSocket || t.CoresPerSocket%t.CoresPerLLC != 0 {
		return &FieldError{"topology.cores_per_llc", t.CoresPerLLC, fmt.Sprintf("a divisor of cores_per_socket (%d)", t.CoresPerSocket)}
	}
	llcs := t.CoresPerSocket / t.CoresPerLLC
	if t.LLCsPerCCD < 0 || (t.LLCsPerCCD > 1 && llcs%t.LLCsPerCCD != 0) {
		return &FieldError{"topology.llcs_per_ccd", t.LLCsPerCCD, fmt.Sprintf("0 (no grouping) or a divisor of the LLCs per socket (%d)", llcs)}
	}
	if t.Numbering != Interleaved && t.Numbering != Contiguous {
		return &FieldError{"topology.numbering", fmt.Sprintf("%q", t.Numbering), `"interleaved" or "contiguous"`}
	}
	if len(s.SMTThroughput) != t.ThreadsPerCore {
		return &FieldError{"smt_throughput", fmt.Sprintf("%d entries", len(s.SMTThroughput)), fmt.Sprintf("exactly threads_per_core (%d) entries, the first 1.0", t.ThreadsPerCore)}
	}
	for i, v := range s.SMTThroughput {
		if i == 0 && v != 1.0 {
			return &FieldError{"smt_throughput[0]", v, "1.0 (one thread alone is the unit)"}
		}
		if math.IsNaN(v) || v < 1.0 || v > float64(i+1) {
			return &FieldError{fmt.Sprintf("smt_throughput[%d]", i), v, fmt.Sprintf("1.0..%d (k busy threads deliver at least one thread's and at most k threads' work)", i+1)}
		}
		if i > 0 && v < s.SMTThroughput[i-1] {
			return &FieldError{fmt.Sprintf("smt_throughput[%d]", i), v, "non-decreasing values"}
		}
	}
	if s.Cache.CorePrivateKB < 0 || s.Cache.CorePrivateKB > 1<<20 {
		return &FieldError{"cache.core_private_kb", s.Cache.CorePrivateKB, "0..1048576 (0: 512 KiB)"}
	}
	if s.Cache.LLCKB < 0 || s.Cache.LLCKB > 1<<22 {
		return &FieldError{"cache.llc_kb", s.Cache.LLCKB, "0..4194304 (0: 2 MiB per core of the LLC)"}
	}
	if s.IdleDriver != "" && s.IdleDriver != IdleDriverNone {
		return &FieldError{"idle_driver", fmt.Sprintf("%q", s.IdleDriver), `"" (a cpuidle driver with a governor) or "none" (no cpuidle: the first state, tick stopped)`}
	}
	if len(s.IdleStates) < 1 || len(s.IdleStates) > MaxIdleStates {
		return &FieldError{"idle_states", fmt.Sprintf("%d entries", len(s.IdleStates)), fmt.Sprintf("1..%d states, shallowest first", MaxIdleStates)}
	}
	for i, st := range s.IdleStates {
		f := fmt.Sprintf("idle_states[%d]", i)
		if st.ExitLatencyUS < 0 || st.ExitLatencyUS > 100000 {
			return &FieldError{f + ".exit_latency_us", st.ExitLatencyUS, "0..100000"}
		}
		if st.TargetResidencyUS < 0 || st.TargetResidencyUS > 1000000 {
			return &FieldError{f + ".target_residency_us", st.TargetResidencyUS, "0..1000000"}
		}
		if st.MeasuredExitNS < 0 || st.MeasuredExitNS > 100000000 {
			return &FieldError{f + ".measured_exit_ns", st.MeasuredExitNS, "0..100000000 (0: as declared)"}
		}
		if st.Polling && (i != 0 || st.ExitLatencyUS != 0 || st.TargetResidencyUS != 0) {
			return &FieldError{f + ".polling", st.Name, "only the first state may poll, with exit latency and target residency 0 (the kernel's POLL state)"}
		}
		if st.Entry != "" && !slices.Contains(Entries, st.Entry) {
			return &FieldError{f + ".entry", fmt.Sprintf("%q", st.Entry), strings.Join(Entries, ", ") + ` or "" (interrupt-driven, as hlt)`}
		}
		if (st.Entry == EntryPoll) != st.Polling && st.Entry != "" {
			return &FieldError{f + ".entry", fmt.Sprintf("%q", st.Entry), `"poll" exactly for the polling state (polling: true)`}
		}
		if i > 0 && (st.ExitLatencyUS < s.IdleStates[i-1].ExitLatencyUS || st.TargetResidencyUS < s.IdleStates[i-1].TargetResidencyUS) {
			return &FieldError{f, st.Name, "states ordered shallowest first (exit latency and target residency non-decreasing)"}
		}
	}
	return s.validateNUMA()
}

// validateNUMA checks the node-distance table and the reclaim distances:
// sched_init_numa (kernel/sched/topology.c) reads the table as a metric
// of one node per socket, so it must be square with a row per socket,
// LOCAL_DISTANCE on the diagonal, symmetric, and farther than local off
// it (SLIT entries are bytes).
func (s *Spec) validateNUMA() error {
	n := s.Topology.Sockets
	if s.NUMADistance != nil {
		if len(s.NUMADistance) != n {
			return &FieldError{"numa_distance", fmt.Sprintf("%d rows", len(s.NUMADistance)), fmt.Sprintf("a %d×%d table, one row per socket (or no table: %d between sockets)", n, n, RemoteDistance)}
		}
		for i, row := range s.NUMADistance {
			if len(row) != n {
				return &FieldError{fmt.Sprintf("numa_distance[%d]", i), fmt.Sprintf("%d entries", len(row)), fmt.Sprintf("%d entries, one per socket", n)}
			}
		}
		for i, row := range s.NUMADistance {
			for j, v := range row {
				f := fmt.Sprintf("numa_distance[%d][%d]", i, j)
				switch {
				case i == j && v != LocalDistance:
					return &FieldError{f, v, fmt.Sprintf("%d (LOCAL_DISTANCE) on the diagonal", LocalDistance)}
				case i != j && (v <= LocalDistance || v > MaxDistance):
					return &FieldError{f, v, fmt.Sprintf("%d..%d between two nodes (farther than LOCAL_DISTANCE %d)", LocalDistance+1, MaxDistance, LocalDistance)}
				case v != s.NUMADistance[j][i]:
					return &FieldError{f, v, fmt.Sprintf("a symmetric table: numa_distance[%d][%d] is %d", j, i, s.NUMADistance[j][i])}
				}
			}
		}
	}
	if v := s.ReclaimDistance; v != 0 && (v < LocalDistance || v > MaxDistance) {
		return &FieldError{"reclaim_distance", v, fmt.Sprintf("0 (the generic RECLAIM_DISTANCE, %d) or %d..%d", ReclaimDistance, LocalDistance, MaxDistance)}
	}
	if v := s.NodeReclaimDistance; v != 0 && (v < LocalDistance || v > MaxDistance) {
		return &FieldError{"node_reclaim_distance", v, fmt.Sprintf("0 (RECLAIM_DISTANCE) or %d..%d", LocalDistance, MaxDistance)}
	}
	return nil
}
