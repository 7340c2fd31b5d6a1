package machine

import (
	"fmt"

	"schedplay/engine/cpumask"
)

// Level names a scheduling-domain level, bottom-up.
type Level int

const (
	// LevelSMT spans the hardware threads of one core.
	LevelSMT Level = iota
	// LevelMC spans one last-level cache (the kernel's sd_llc on x86/AMD;
	// POWER9's CACHE level).
	LevelMC
	// LevelDIE spans one socket (PKG/DIE).
	LevelDIE
	// LevelNUMA spans the whole machine.
	LevelNUMA
)

func (l Level) String() string {
	return [...]string{"SMT", "MC", "DIE", "NUMA"}[l]
}

// Distance classes between two CPUs, used for migration costs and counts.
type Distance int

const (
	SameCPU Distance = iota
	SameCore
	SameLLC
	SameSocket
	CrossSocket
)

func (d Distance) String() string {
	return [...]string{"same_cpu", "smt", "llc", "cross_llc", "cross_socket"}[d]
}

// Domain is one level of a CPU's scheduling-domain hierarchy. Spans and
// groups are shared by every CPU of the span (read-only).
type Domain struct {
	Level  Level
	Span   cpumask.Mask
	Groups []cpumask.Mask // the child-level spans partitioning Span
	// GroupKind says what the groups are (single CPUs, cores, LLCs or
	// sockets) and GroupIdx[i] which one Groups[i] is, so per-group
	// statistics can be cached by (kind, index).
	GroupKind GroupKind
	GroupIdx  []int
	// GroupCPUs[i] lists the CPUs of Groups[i] in order (the balancer's
	// per-CPU walks), and SpanWeight is Span's weight.
	GroupCPUs  [][]int32
	SpanWeight int
	// ShareLLC marks levels whose CPUs share the last-level cache
	// (SD_SHARE_PKG_RESOURCES); the highest such level is sd_llc.
	ShareLLC bool
	// Kernel sd_init parameters (v5.2, kernel-reference.md §3.1).
	ImbalancePct   int64
	CacheNiceTries int
	BusyFactor     int
	MinIntervalMS  int64 // = span weight
	MaxIntervalMS  int64 // = 2 × span weight
	PreferSibling  bool
	// NUMADistance is the node distance a NUMA level spans
	// (sched_domains_numa_distance[tl->numa_level]: the machine's largest,
	// Spec.MaxNodeDistance); 0 below the NUMA level. sd_init clears
	// SD_WAKE_AFFINE and SD_BALANCE_FORK when it exceeds the era's reclaim
	// distance; the engine decides that (it knows the era).
	NUMADistance int
}

// GroupKind is what the scheduling groups of a level are made of.
type GroupKind uint8

const (
	GroupCPU GroupKind = iota
	GroupCore
	GroupLLC
	GroupSocket
	NumGroupKinds
)

// GroupIndexOf returns the index, within kind, of the group that holds cpu.
func (tp *Topology) GroupIndexOf(kind GroupKind, cpu int) int {
	switch kind {
	case GroupCore:
		return tp.Core[cpu]
	case GroupLLC:
		return tp.LLC[cpu]
	case GroupSocket:
		return tp.Socket[cpu]
	}
	return cpu
}

// NumGroups is how many groups of kind the machine has.
func (tp *Topology) NumGroups(kind GroupKind) int {
	switch kind {
	case GroupCore:
		return tp.NCores
	case GroupLLC:
		return tp.NLLC
	case GroupSocket:
		return tp.Spec.Topology.Sockets
	}
	return tp.NCPU
}

// Topology is a validated machine with per-CPU derived data.
type Topology struct {
	Spec           *Spec
	NCPU           int
	NCores         int
	NLLC           int
	ThreadsPerCore int

	Socket []int // per CPU
	Core   []int // per CPU: global core index
	Thread []int // per CPU: index within its core
	LLC    []int // per CPU: global LLC index
	CCD    []int // per CPU: global CCD index (= LLC index without grouping)

	CoreCPUs   [][]int        // per core: its CPUs, thread order
	Siblings   []cpumask.Mask // per core: SMT mask
	LLCSpan    []cpumask.Mask // per LLC
	SocketSpan []cpumask.Mask // per socket
	All        cpumask.Mask

	// Domains[cpu] lists the CPU's domains bottom-up (degenerate levels
	// removed). Empty on a uniprocessor.
	Domains [][]*Domain
	// LLCDomainIdx[cpu] is the index in Domains[cpu] of sd_llc, or -1.
	LLCDomainIdx []int

	// SMTThroughput1024[k] is the total throughput of a core with k busy
	// threads, ×1024 (index 0 unused).
	SMTThroughput1024 []int64
}

// Build validates s and derives the topology.
func Build(s *Spec) (*Topology, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t := s.Topology
	n := s.NumCPUs()
	nCores := t.Sockets * t.CoresPerSocket
	llcPerSocket := t.CoresPerSocket / t.CoresPerLLC
	tp := &Topology{
		Spec: s, NCPU: n, NCores: nCores, NLLC: t.Sockets * llcPerSocket,
		ThreadsPerCore: t.ThreadsPerCore,
		Socket:         make([]int, n), Core: make([]int, n), Thread: make([]int, n),
		LLC: make([]int, n), CCD: make([]int, n),
		CoreCPUs: make([][]int, nCores), All: cpumask.Range(n, 0, n-1),
	}
	for core := 0; core < nCores; core++ {
		for th := 0; th < t.ThreadsPerCore; th++ {
			var cpu int
			if t.Numbering == Interleaved {
				cpu = th*nCores + core
			} else {
				cpu = core*t.ThreadsPerCore + th
			}
			socket := core / t.CoresPerSocket
			llc := core / t.CoresPerLLC
			tp.Socket[cpu], tp.Core[cpu], tp.Thread[cpu], tp.LLC[cpu] = socket, core, th, llc
			tp.CCD[cpu] = llc
			if t.LLCsPerCCD > 1 {
				tp.CCD[cpu] = llc / t.LLCsPerCCD
			}
			tp.CoreCPUs[core] = append(tp.CoreCPUs[core], cpu)
		}
	}
	tp.Siblings = make([]cpumask.Mask, nCores)
	for core, cpus := range tp.CoreCPUs {
		tp.Siblings[core] = cpumask.Of(n, cpus...)
	}
	tp.LLCSpan = make([]cpumask.Mask, tp.NLLC)
	for i := range tp.LLCSpan {
		tp.LLCSpan[i] = cpumask.New(n)
	}
	tp.SocketSpan = make([]cpumask.Mask, t.Sockets)
	for i := range tp.SocketSpan {
		tp.SocketSpan[i] = cpumask.New(n)
	}
	for cpu := 0; cpu < n; cpu++ {
		tp.LLCSpan[tp.LLC[cpu]].Set(cpu)
		tp.SocketSpan[tp.Socket[cpu]].Set(cpu)
	}
	tp.SMTThroughput1024 = make([]int64, t.ThreadsPerCore+1)
	for k, v := range s.SMTThroughput {
		tp.SMTThroughput1024[k+1] = int64(v*1024 + 0.5)
	}
	tp.buildDomains()
	return tp, nil
}

// buildDomains creates the shared Domain objects for every span and hangs
// them on each CPU, dropping levels whose span equals their child's (the
// kernel's degenerate-domain rule).
func (tp *Topology) buildDomains() {
	n := tp.NCPU
	t := tp.Spec.Topology
	tp.Domains = make([][]*Domain, n)
	tp.LLCDomainIdx = make([]int, n)

	type levelDef struct {
		level  Level
		spanOf func(cpu int) (key int, span cpumask.Mask)
	}
	singleGroups := func(span cpumask.Mask) []cpumask.Mask {
		var g []cpumask.Mask
		for c := span.First(); c >= 0; c = span.Next(c + 1) {
			g = append(g, cpumask.Of(n, c))
		}
		return g
	}
	groupsBy := func(key func(int) int, spanOfKey func(int) cpumask.Mask) func(cpumask.Mask) []cpumask.Mask {
		return func(span cpumask.Mask) []cpumask.Mask {
			var g []cpumask.Mask
			seen := map[int]bool{}
			for c := span.First(); c >= 0; c = span.Next(c + 1) {
				k := key(c)
				if !seen[k] {
					seen[k] = true
					g = append(g, spanOfKey(k))
				}
			}
			return g
		}
	}
	defs := []levelDef{
		{LevelSMT, func(c int) (int, cpumask.Mask) { return tp.Core[c], tp.Siblings[tp.Core[c]] }},
		{LevelMC, func(c int) (int, cpumask.Mask) { return tp.LLC[c], tp.LLCSpan[tp.LLC[c]] }},
		{LevelDIE, func(c int) (int, cpumask.Mask) { return tp.Socket[c], tp.SocketSpan[tp.Socket[c]] }},
		{LevelNUMA, func(c int) (int, cpumask.Mask) { return 0, tp.All }},
	}
	// The child groups of each level are the spans of the previous kept level.
	cache := map[[2]int]*Domain{}
	for cpu := 0; cpu < n; cpu++ {
		tp.LLCDomainIdx[cpu] = -1
		prevWeight := 1
		var childKey func(int) int
		var childSpan func(int) cpumask.Mask
		var childKind GroupKind
		for _, d := range defs {
			key, span := d.spanOf(cpu)
			w := span.Weight()
			if w <= prevWeight {
				continue // degenerate: same span as the child
			}
			dom, ok := cache[[2]int{int(d.level), key}]
			if !ok {
				dom = newDomain(d.level, span, t.Sockets)
				if d.level == LevelNUMA {
					// One NUMA level spans the machine here; on more
					// than two sockets with unequal distances the
					// kernel builds one level per distinct distance,
					// of which this is the last (the largest).
					dom.NUMADistance = tp.Spec.MaxNodeDistance()
				}
				if childKey == nil {
					dom.Groups = singleGroups(span)
					dom.GroupKind = GroupCPU
				} else {
					dom.Groups = groupsBy(childKey, childSpan)(span)
					dom.GroupKind = childKind
				}
				for _, g := range dom.Groups {
					dom.GroupIdx = append(dom.GroupIdx, tp.GroupIndexOf(dom.GroupKind, g.First()))
					var ids []int32
					for c := g.First(); c >= 0; c = g.Next(c + 1) {
						ids = append(ids, int32(c))
					}
					dom.GroupCPUs = append(dom.GroupCPUs, ids)
				}
				cache[[2]int{int(d.level), key}] = dom
			}
			tp.Domains[cpu] = append(tp.Domains[cpu], dom)
			if dom.ShareLLC {
				tp.LLCDomainIdx[cpu] = len(tp.Domains[cpu]) - 1
			}
			prevWeight = w
			switch d.level {
			case LevelSMT:
				childKey, childSpan = func(c int) int { return tp.Core[c] }, func(k int) cpumask.Mask { return tp.Siblings[k] }
				childKind = GroupCore
			case LevelMC:
				childKey, childSpan = func(c int) int { return tp.LLC[c] }, func(k int) cpumask.Mask { return tp.LLCSpan[k] }
				childKind = GroupLLC
			case LevelDIE:
				childKey, childSpan = func(c int) int { return tp.Socket[c] }, func(k int) cpumask.Mask { return tp.SocketSpan[k] }
				childKind = GroupSocket
			}
		}
	}
}

// newDomain fills in the v5.2 sd_init parameters for a level
// (kernel-reference.md §3.1: base 125 / busy_factor 32; SMT 110; LLC 117).
func newDomain(level Level, span cpumask.Mask, sockets int) *Domain {
	w := int64(span.Weight())
	d := &Domain{Level: level, Span: span, SpanWeight: int(w), BusyFactor: 32, MinIntervalMS: w, MaxIntervalMS: 2 * w,
		ImbalancePct: 125, CacheNiceTries: 1, PreferSibling: true}
	switch level {
	case LevelSMT:
		d.ImbalancePct, d.CacheNiceTries, d.ShareLLC = 110, 0, true
	case LevelMC:
		d.ImbalancePct, d.CacheNiceTries, d.ShareLLC = 117, 1, true
	case LevelNUMA:
		d.ImbalancePct, d.CacheNiceTries, d.PreferSibling = 125, 2, false
	}
	return d
}

// Distance classifies how far apart two CPUs are.
func (tp *Topology) Distance(a, b int) Distance {
	switch {
	case a == b:
		return SameCPU
	case tp.Core[a] == tp.Core[b]:
		return SameCore
	case tp.LLC[a] == tp.LLC[b]:
		return SameLLC
	case tp.Socket[a] == tp.Socket[b]:
		return SameSocket
	}
	return CrossSocket
}

// SiblingsOf returns the SMT mask of cpu (including cpu).
func (tp *Topology) SiblingsOf(cpu int) cpumask.Mask { return tp.Siblings[tp.Core[cpu]] }

// LLCOf returns the LLC span of cpu.
func (tp *Topology) LLCOf(cpu int) cpumask.Mask { return tp.LLCSpan[tp.LLC[cpu]] }

// ShareCache reports whether a and b share the last-level cache.
func (tp *Topology) ShareCache(a, b int) bool { return tp.LLC[a] == tp.LLC[b] }

// LLCSize is the weight of cpu's sd_llc span (1 when there is none).
func (tp *Topology) LLCSize(cpu int) int {
	if i := tp.LLCDomainIdx[cpu]; i >= 0 {
		return tp.Domains[cpu][i].Span.Weight()
	}
	return 1
}

// Describe is a one-line summary, e.g. "2 sockets × 22 cores × 2 threads = 88 CPUs, LLC 44 CPUs".
func (tp *Topology) Describe() string {
	t := tp.Spec.Topology
	return fmt.Sprintf("%d socket(s) × %d cores × %d threads = %d CPUs, %d LLC(s) of %d CPUs, %s numbering",
		t.Sockets, t.CoresPerSocket, t.ThreadsPerCore, tp.NCPU, tp.NLLC, t.CoresPerLLC*t.ThreadsPerCore, t.Numbering)
}
