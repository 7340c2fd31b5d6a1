package oracle

import (
	"bufio"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"schedplay/engine/cpumask"
	"schedplay/engine/machine"
)

// GuestView is the guest kernel's own view of its machine, as its /init
// reports it before the load runs: per CPU its package, die, core, SMT
// siblings, L3 span and node; the nodes' distances; the scheduler
// domains' spans (/proc/schedstat) and features (debugfs).
type GuestView struct {
	Kernel   string      `json:"kernel"` // uname -r
	NCPU     int         `json:"ncpu"`
	CPUs     []GuestCPU  `json:"cpus"`
	Nodes    []GuestNode `json:"nodes"`
	Domains  [][]string  `json:"domains"` // per CPU, bottom-up: its domains' spans as CPU lists
	Features []string    `json:"features"`
	// FeatureWrites are the --feature writes the guest made before it
	// printed Features: per token (NAME or NO_NAME), "ok" or "failed".
	FeatureWrites map[string]string `json:"feature_writes,omitempty"`
	Tunables      map[string]string `json:"tunables"`
	// IdleDriver is the cpuidle driver ("none" without one), IdleStates
	// its states on cpu0 (name, exit latency, target residency, disabled).
	IdleDriver string      `json:"cpuidle_driver"`
	IdleStates []IdleState `json:"cpuidle_states"`
}

// IdleState is a cpuidle state the guest declares.
type IdleState struct {
	Name                       string `json:"name"`
	ExitLatencyUS, ResidencyUS int64
	Disabled                   bool `json:"disabled"`
}

// GuestCPU is one CPU's topology in the guest.
type GuestCPU struct {
	CPU      int    `json:"cpu"`
	Package  int    `json:"package"`
	Die      int    `json:"die"`
	Core     int    `json:"core"`
	Siblings string `json:"siblings"`
	L3       string `json:"l3"`
	Node     int    `json:"node"`
}

// GuestNode is a NUMA node of the guest.
type GuestNode struct {
	Node     int    `json:"node"`
	CPUs     string `json:"cpus"`
	Distance []int  `json:"distance"`
}

// parseGuestView reads the topology block of the guest's report.
func parseGuestView(text string) (*GuestView, error) {
	v := &GuestView{Tunables: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	cur := -1 // the schedstat cpu whose domains follow
	for ln := 1; sc.Scan(); ln++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("guest report line %d %q: %s", ln, sc.Text(), why) }
		switch {
		case f[0] == "uname" && len(f) == 2:
			v.Kernel = f[1]
		case f[0] == "ncpu" && len(f) == 2:
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, bad("ncpu")
			}
			v.NCPU = n
			v.Domains = make([][]string, n)
		case f[0] == "cpu" && len(f) == 14:
			c := GuestCPU{Siblings: f[9], L3: f[11]}
			var err error
			for _, p := range []struct {
				dst *int
				s   string
			}{{&c.CPU, f[1]}, {&c.Package, f[3]}, {&c.Die, f[5]}, {&c.Core, f[7]}, {&c.Node, f[13]}} {
				if *p.dst, err = strconv.Atoi(p.s); err != nil {
					return nil, bad("a CPU's numbers")
				}
			}
			v.CPUs = append(v.CPUs, c)
		case f[0] == "node" && len(f) >= 5 && f[2] == "cpus" && f[4] == "distance":
			n := GuestNode{CPUs: f[3]}
			var err error
			if n.Node, err = strconv.Atoi(f[1]); err != nil {
				return nil, bad("node")
			}
			for _, d := range f[5:] {
				x, err := strconv.Atoi(d)
				if err != nil {
					return nil, bad("distance")
				}
				n.Distance = append(n.Distance, x)
			}
			v.Nodes = append(v.Nodes, n)
		case f[0] == "cpuidle" && len(f) == 2:
			v.IdleDriver = f[1]
		case strings.HasPrefix(f[0], "cpu") && f[0] != "cpu":
			n, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
			if err != nil {
				return nil, bad("schedstat cpu")
			}
			cur = n
		case strings.HasPrefix(f[0], "domain") && len(f) >= 2:
			if cur < 0 || cur >= len(v.Domains) {
				return nil, bad("a domain before its cpu")
			}
			// "domainN MASK ..." (schedstat 15) or "domainN NAME MASK
			// ..." (16 and later).
			mask := f[1]
			if len(f) >= 3 && !isHexMask(f[1]) {
				mask = f[2]
			}
			span, err := hexMaskList(mask)
			if err != nil {
				return nil, bad(err.Error())
			}
			v.Domains[cur] = append(v.Domains[cur], span)
		case f[0] == "features":
			v.Features = f[1:]
		case f[0] == "featureset" && len(f) == 3:
			if v.FeatureWrites == nil {
				v.FeatureWrites = map[string]string{}
			}
			v.FeatureWrites[f[1]] = f[2]
		case f[0] == "tunable" && len(f) == 3:
			v.Tunables[f[1]] = f[2]
		case f[0] == "idlestate" && len(f) == 5:
			st := IdleState{Name: f[1], Disabled: f[4] != "0"}
			var err1, err2 error
			st.ExitLatencyUS, err1 = strconv.ParseInt(f[2], 10, 64)
			st.ResidencyUS, err2 = strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, bad("idle state")
			}
			v.IdleStates = append(v.IdleStates, st)
		}
	}
	if v.NCPU == 0 || len(v.CPUs) != v.NCPU {
		return nil, fmt.Errorf("guest report: %d CPUs described of %d", len(v.CPUs), v.NCPU)
	}
	sort.Slice(v.CPUs, func(i, j int) bool { return v.CPUs[i].CPU < v.CPUs[j].CPU })
	return v, nil
}

func isHexMask(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF,", r) {
			return false
		}
	}
	return s != ""
}

// hexMaskList turns a kernel CPU mask ("000000ff", comma-separated 32-bit
// words, most significant first) into a CPU list ("0-7").
func hexMaskList(s string) (string, error) {
	n, ok := new(big.Int).SetString(strings.ReplaceAll(s, ",", ""), 16)
	if !ok {
		return "", fmt.Errorf("CPU mask %q", s)
	}
	m := cpumask.New(max(n.BitLen(), 1))
	for i := 0; i < n.BitLen(); i++ {
		if n.Bit(i) == 1 {
			m.Set(i)
		}
	}
	return m.String(), nil
}

// Check compares the guest's view with the topology the simulation
// builds from the same shape; it returns every difference found (none:
// the guest is the machine the simulation runs).
func (v *GuestView) Check(tp *machine.Topology) []string {
	var diffs []string
	if v.NCPU != tp.NCPU {
		return []string{fmt.Sprintf("the guest has %d CPUs, the simulated machine %d", v.NCPU, tp.NCPU)}
	}
	nodeOf := func(cpu int) int { return tp.Socket[cpu] } // one node per socket
	for _, c := range v.CPUs {
		cpu := c.CPU
		if c.Package != tp.Socket[cpu] {
			diffs = append(diffs, fmt.Sprintf("cpu%d: package %d in the guest, socket %d simulated", cpu, c.Package, tp.Socket[cpu]))
		}
		if want := tp.Siblings[tp.Core[cpu]].String(); c.Siblings != want {
			diffs = append(diffs, fmt.Sprintf("cpu%d: SMT siblings %s in the guest, %s simulated", cpu, c.Siblings, want))
		}
		if want := tp.LLCSpan[tp.LLC[cpu]].String(); c.L3 != want {
			diffs = append(diffs, fmt.Sprintf("cpu%d: L3 %s in the guest, LLC %s simulated", cpu, c.L3, want))
		}
		if tp.Spec.Topology.Sockets > 1 && c.Node != nodeOf(cpu) {
			diffs = append(diffs, fmt.Sprintf("cpu%d: node %d in the guest, %d simulated", cpu, c.Node, nodeOf(cpu)))
		}
		if cpu < len(v.Domains) && len(v.Domains[cpu]) > 0 {
			var want []string
			for _, d := range tp.Domains[cpu] {
				want = append(want, d.Span.String())
			}
			if got := v.Domains[cpu]; strings.Join(got, " ") != strings.Join(want, " ") {
				diffs = append(diffs, fmt.Sprintf("cpu%d: scheduler domains %s in the guest, %s simulated", cpu, strings.Join(got, " ⊂ "), strings.Join(want, " ⊂ ")))
			}
		}
	}
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("… and %d more", len(diffs)-8))
	}
	return diffs
}

// withNUMA is spec with the guest's node distances and its kernel's
// reclaim-distance rule. The guest is an x86 vCPU with vendor
// GenuineIntel (qemuArgs), so its sd_init compares with the generic
// RECLAIM_DISTANCE of 30: no powerpc RECLAIM_DISTANCE of 10 and no Zen
// node_reclaim_distance of 32, whatever machine the shape came from. The
// simulation of the comparison runs the guest's machine, not the preset's.
func (v *GuestView) withNUMA(spec *machine.Spec) (*machine.Spec, string) {
	sp := *spec
	sp.ReclaimDistance, sp.NodeReclaimDistance, sp.ReclaimDistanceNote = 0, 0, ""
	if len(v.Nodes) != spec.Topology.Sockets || len(v.Nodes) < 2 {
		sp.NUMADistance, sp.NUMADistanceNote = nil, ""
		return &sp, "numa: one node in the guest"
	}
	table := make([][]int, len(v.Nodes))
	for i, n := range v.Nodes {
		if len(n.Distance) != len(v.Nodes) {
			sp.NUMADistance, sp.NUMADistanceNote = nil, ""
			return &sp, fmt.Sprintf("numa: the guest's node %d has %d distances for %d nodes: the simulation uses the default %d", n.Node, len(n.Distance), len(v.Nodes), machine.RemoteDistance)
		}
		table[i] = append([]int(nil), n.Distance...)
	}
	sp.NUMADistance = table
	sp.NUMADistanceNote = "measured: the guest's /sys/devices/system/node/node*/distance"
	if err := sp.Validate(); err != nil {
		sp.NUMADistance, sp.NUMADistanceNote = nil, ""
		return &sp, fmt.Sprintf("numa: the guest's distance table is not one the simulation takes (%v): the default %d", err, machine.RemoteDistance)
	}
	return &sp, fmt.Sprintf("numa: the guest's node distances %v and x86's RECLAIM_DISTANCE 30 in the simulation too", table)
}

// withIdle is spec with the guest's cpuidle: its driver's states as it
// declares them (POLL polls; no state is core-level: QEMU's vCPUs power
// nothing down), or, without a driver, the one state default_idle_call
// uses (HLT, no exit to speak of under TCG). The guest's idle is part of
// the machine the simulation must run, not a figure fitted to it.
func (v *GuestView) withIdle(spec *machine.Spec) (*machine.Spec, string) {
	sp := *spec
	var states []machine.IdleState
	for _, st := range v.IdleStates {
		// The guest view carries no desc: states other than POLL are
		// taken as interrupt-driven ("", as HLT). The TCG guests booted
		// here have no cpuidle driver at all (the HLT branch below).
		s := machine.IdleState{Name: st.Name, ExitLatencyUS: st.ExitLatencyUS, TargetResidencyUS: st.ResidencyUS,
			Polling: st.Name == "POLL", Disabled: st.Disabled}
		if s.Polling {
			s.Entry = machine.EntryPoll
		}
		states = append(states, s)
	}
	if v.IdleDriver == "" || v.IdleDriver == "none" || len(states) == 0 {
		sp.IdleDriver = machine.IdleDriverNone
		sp.IdleStates = []machine.IdleState{{Name: "HLT", Entry: machine.EntryHLT}}
		return &sp, "idle: no cpuidle driver in the guest: default_idle (HLT) in the simulation too"
	}
	sp.IdleDriver, sp.IdleStates = "", states
	var names []string
	for _, st := range states {
		names = append(names, fmt.Sprintf("%s %d/%d µs", st.Name, st.ExitLatencyUS, st.TargetResidencyUS))
	}
	return &sp, fmt.Sprintf("idle: the guest's cpuidle driver %s and its states (%s) in the simulation too", v.IdleDriver, strings.Join(names, ", "))
}
