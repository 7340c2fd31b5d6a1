// Package detect describes the machine it runs on (or a sysfs tree given
// to it) as a machine preset: the topology from sysfs (packages, dies,
// cores, SMT siblings, the LLC, NUMA nodes), the cpuidle states and
// governor, and — with Measure, Linux only — cost figures from short
// microbenchmarks on pinned OS threads.
//
// It is not part of engine/ because it does I/O. Everything it cannot
// read is said in Result.Fallbacks (and in the spec's notes) together with
// what it assumed instead, so a partial sysfs (a container, a VM) still
// gives a preset that loads, and a reader can see what is guessed.
package detect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

const (
	sysCPU  = "sys/devices/system/cpu"
	sysNode = "sys/devices/system/node"
)

// Options tune Detect.
type Options struct {
	// Name is the preset name; "" gives "detected".
	Name string
	// Now dates the source line; the zero time means time.Now().
	Now time.Time
}

// Result is what Detect found and the preset built from it.
type Result struct {
	Spec  *machine.Spec
	Found Found
	// Fallbacks lists, one line each, what sysfs lacked (or what did not
	// fit the preset schema) and what was assumed instead. They are also
	// in Spec.Notes, prefixed "missing:".
	Fallbacks []string
	// SimToReal[i] is the real CPU id that simulated CPU i stands for.
	SimToReal []int
	// Real holds the topology as read, by real CPU id, for Measure to
	// choose its CPU pairs.
	Real []CPU
}

// Found summarises the topology and idle setup read.
type Found struct {
	CPUs           []int // online CPUs, real ids
	Offline        []int // present but offline
	Sockets        int   // distinct physical_package_id
	Dies           int   // distinct (package, die_id)
	Cores          int   // distinct thread-sibling sets
	ThreadsPerCore int   // as modelled (1 when it varies)
	LLCs           int   // distinct LLC spans (0: no cache information)
	CoresPerLLC    int   // as modelled
	Nodes          int   // NUMA nodes (0: no node directory)
	NodeDistances  [][]int
	Numbering      string // as modelled
	NumberingExact bool   // simulated CPU n is real CPU n
	IdleDriver     string // current_driver, "" when unknown
	Governor       string // current_governor(_ro), "" when unknown
	IdleStates     []string
	Kernel         string // osrelease, "" when unknown
	CPUModel       string // /proc/cpuinfo model name, "" when unknown
	LLCKiB         int64
	PrivateKiB     int64
}

// CPU is one online CPU as sysfs describes it.
type CPU struct {
	ID      int
	Package int
	Die     int
	CoreID  int
	Threads []int // its core's online threads (itself included), sorted
	LLC     []int // the online CPUs sharing its last-level cache, sorted; nil when unknown
	Node    int   // -1 when unknown
}

// Core returns the lowest CPU id of c's core: a key for the core.
func (c CPU) Core() int { return c.Threads[0] }

// Detect reads the topology and idle states from fsys (rooted like "/":
// sys/devices/system/... and proc/...) and builds a machine spec that
// presets.ParseMachine accepts. Costs are the knob defaults, each noted
// as assumed; Measure and Apply replace the ones they measure.
func Detect(fsys fs.FS, opt Options) (*Result, error) {
	d := &detector{fsys: fsys, r: &Result{}}
	if err := d.cpus(); err != nil {
		return nil, err
	}
	d.nodes()
	d.shape()
	d.idle()
	d.caches()
	d.identity()
	return d.build(opt), nil
}

type detector struct {
	fsys  fs.FS
	r     *Result
	cpus_ []CPU
	byID  map[int]*CPU

	sockets, coresPerSocket, threads, coresPerLLC int
	numbering                                     string
	idleStates                                    []machine.IdleState
	idleDriver                                    string
	idleNotes                                     []string
	cacheNotes                                    []string
}

func (d *detector) fallback(format string, args ...any) {
	d.r.Fallbacks = append(d.r.Fallbacks, fmt.Sprintf(format, args...))
}

// cpus reads the online CPUs and each one's topology files.
func (d *detector) cpus() error {
	f := &d.r.Found
	var online []int
	if s, ok := readString(d.fsys, sysCPU+"/online"); ok {
		l, err := parseCPUList(s)
		if err != nil {
			return fmt.Errorf("%s/online: %v", sysCPU, err)
		}
		online = l
	}
	dirs := readNumbered(d.fsys, sysCPU, "cpu")
	hasDir := map[int]bool{}
	for _, c := range dirs {
		hasDir[c] = true
	}
	if online == nil {
		if len(dirs) == 0 {
			return fmt.Errorf("no CPUs found: neither %s/online nor %s/cpu<N> directories exist (is this a sysfs tree?)", sysCPU, sysCPU)
		}
		online = dirs
		d.fallback("no %s/online: every cpu<N> directory (%s) taken as online", sysCPU, formatCPUList(dirs))
	}
	if s, ok := readString(d.fsys, sysCPU+"/present"); ok {
		if present, err := parseCPUList(s); err == nil {
			on := map[int]bool{}
			for _, c := range online {
				on[c] = true
			}
			for _, c := range present {
				if !on[c] {
					f.Offline = append(f.Offline, c)
				}
			}
		}
	}
	var kept []int
	for _, c := range online {
		if hasDir[c] {
			kept = append(kept, c)
		}
	}
	if len(kept) < len(online) {
		d.fallback("online CPUs %s have no cpu<N> directory: left out", formatCPUList(diff(online, kept)))
	}
	if len(kept) == 0 {
		return fmt.Errorf("no online CPU has a directory under %s", sysCPU)
	}
	if len(kept) > machine.MaxCPUs {
		return fmt.Errorf("%d online CPUs: the simulator models at most %d", len(kept), machine.MaxCPUs)
	}
	f.CPUs = kept
	on := map[int]bool{}
	for _, c := range kept {
		on[c] = true
	}
	d.byID = map[int]*CPU{}
	var noTopo, noPkg []int
	for _, id := range kept {
		dir := fmt.Sprintf("%s/cpu%d/topology", sysCPU, id)
		c := CPU{ID: id, Node: -1}
		if !exists(d.fsys, dir) {
			noTopo = append(noTopo, id)
		}
		var ok bool
		if c.Package, ok = readInt(d.fsys, dir+"/physical_package_id"); !ok || c.Package < 0 {
			c.Package = 0
			noPkg = append(noPkg, id)
		}
		if c.Die, ok = readInt(d.fsys, dir+"/die_id"); !ok || c.Die < 0 {
			c.Die = 0
		}
		if c.CoreID, ok = readInt(d.fsys, dir+"/core_id"); !ok {
			c.CoreID = id
		}
		sib, ok := readString(d.fsys, dir+"/core_cpus_list")
		if !ok {
			sib, ok = readString(d.fsys, dir+"/thread_siblings_list")
		}
		if l, err := parseCPUList(sib); ok && err == nil {
			c.Threads = intersect(l, on)
		}
		if !containsInt(c.Threads, id) {
			c.Threads = []int{id}
		}
		d.cpus_ = append(d.cpus_, c)
	}
	for i := range d.cpus_ {
		d.byID[d.cpus_[i].ID] = &d.cpus_[i]
	}
	if len(noTopo) > 0 {
		d.fallback("CPUs %s have no topology directory: each taken as its own core in package 0", formatCPUList(noTopo))
	} else if len(noPkg) > 0 {
		d.fallback("CPUs %s have no physical_package_id: package 0 assumed", formatCPUList(noPkg))
	}
	// Sibling lists must agree (a core is the same set from each of its
	// threads); a tree where they do not is repaired to single-thread
	// cores.
	for i := range d.cpus_ {
		c := &d.cpus_[i]
		for _, t := range c.Threads {
			o := d.byID[t]
			if !equalInts(o.Threads, c.Threads) || o.Package != c.Package {
				d.fallback("CPU %d and CPU %d disagree about their thread siblings (%s vs %s): SMT siblings ignored", c.ID, t, formatCPUList(c.Threads), formatCPUList(o.Threads))
				for j := range d.cpus_ {
					d.cpus_[j].Threads = []int{d.cpus_[j].ID}
				}
				return nil
			}
		}
	}
	return nil
}

// nodes reads the NUMA nodes and distances.
func (d *detector) nodes() {
	f := &d.r.Found
	ids := readNumbered(d.fsys, sysNode, "node")
	if len(ids) == 0 {
		d.fallback("no NUMA node directory (%s/node<N>): one node per package assumed", sysNode)
		return
	}
	for _, n := range ids {
		s, ok := readString(d.fsys, fmt.Sprintf("%s/node%d/cpulist", sysNode, n))
		if !ok {
			continue
		}
		l, err := parseCPUList(s)
		if err != nil {
			continue
		}
		if len(l) == 0 {
			continue // a memory-only node (CXL, HBM)
		}
		f.Nodes++
		for _, c := range l {
			if cpu := d.byID[c]; cpu != nil {
				cpu.Node = n
			}
		}
		if s, ok := readString(d.fsys, fmt.Sprintf("%s/node%d/distance", sysNode, n)); ok {
			var row []int
			for _, w := range strings.Fields(s) {
				if v, err := strconv.Atoi(w); err == nil {
					row = append(row, v)
				}
			}
			f.NodeDistances = append(f.NodeDistances, row)
		}
	}
}

// shape maps the CPUs onto the schema: sockets × cores × threads, LLCs of
// whole cores, and a numbering.
func (d *detector) shape() {
	f := &d.r.Found
	// Packages, dies, cores.
	pkgs := map[int][]int{} // package -> core keys
	dies := map[[2]int]bool{}
	cores := map[int]bool{}
	threadCounts := map[int]int{}
	for _, c := range d.cpus_ {
		dies[[2]int{c.Package, c.Die}] = true
		if !cores[c.Core()] {
			cores[c.Core()] = true
			pkgs[c.Package] = append(pkgs[c.Package], c.Core())
			threadCounts[len(c.Threads)]++
		}
	}
	f.Sockets, f.Dies, f.Cores = len(pkgs), len(dies), len(cores)

	d.threads = 0
	for t := range threadCounts {
		d.threads = t
	}
	if len(threadCounts) > 1 || d.threads > machine.MaxThreadsPerCore {
		var parts []string
		for _, t := range sortedKeys(threadCounts) {
			parts = append(parts, fmt.Sprintf("%d cores with %d threads", threadCounts[t], t))
		}
		d.fallback("cores differ in SMT threads (%s; a hybrid CPU or SMT partly offline): modelled as %d single-thread cores, SMT not modelled", strings.Join(parts, ", "), len(d.cpus_))
		for i := range d.cpus_ {
			d.cpus_[i].Threads = []int{d.cpus_[i].ID}
		}
		d.shape()
		return
	}

	pkgIDs := sortedKeys(pkgs)
	d.sockets = len(pkgIDs)
	d.coresPerSocket = len(pkgs[pkgIDs[0]])
	uniform := true
	for _, p := range pkgIDs {
		if len(pkgs[p]) != d.coresPerSocket {
			uniform = false
		}
	}
	if !uniform || d.sockets > 64 {
		var parts []string
		for _, p := range pkgIDs {
			parts = append(parts, fmt.Sprintf("package %d: %d cores", p, len(pkgs[p])))
		}
		d.fallback("packages differ in online cores (%s): modelled as one socket of %d cores", strings.Join(parts, ", "), len(cores))
		for i := range d.cpus_ {
			d.cpus_[i].Package = 0
		}
		d.shape()
		return
	}

	// LLCs from the caches; cores of an LLC must be whole and inside one
	// package, and every LLC must hold the same number of cores.
	d.readLLCs()
	llcOf := map[int]int{} // core key -> LLC key
	llcCores := map[int][]int{}
	llcOK := true
	for _, c := range d.cpus_ {
		if c.LLC == nil {
			llcOK = false
			break
		}
		k := c.LLC[0]
		if prev, ok := llcOf[c.Core()]; ok && prev != k {
			d.fallback("the threads of core %s see different LLCs: one LLC per package assumed", formatCPUList(c.Threads))
			llcOK = false
			break
		}
		if _, ok := llcOf[c.Core()]; !ok {
			llcOf[c.Core()] = k
			llcCores[k] = append(llcCores[k], c.Core())
		}
		spans := false
		for _, o := range c.LLC {
			spans = spans || d.byID[o].Package != c.Package
		}
		if spans {
			d.fallback("the LLC of CPU %d (%s) spans packages: one LLC per package assumed", c.ID, formatCPUList(c.LLC))
			llcOK = false
			break
		}
	}
	if llcOK {
		d.coresPerLLC = 0
		for _, k := range sortedKeys(llcCores) {
			n := len(llcCores[k])
			if d.coresPerLLC == 0 {
				d.coresPerLLC = n
			} else if n != d.coresPerLLC {
				d.fallback("LLCs differ in size (%d and %d cores): one LLC per package assumed", d.coresPerLLC, n)
				llcOK = false
				break
			}
		}
		if llcOK && d.coresPerSocket%d.coresPerLLC != 0 {
			d.fallback("LLCs of %d cores do not divide packages of %d cores: one LLC per package assumed", d.coresPerLLC, d.coresPerSocket)
			llcOK = false
		}
		if llcOK {
			f.LLCs = len(llcCores)
		}
	}
	if !llcOK {
		d.coresPerLLC = d.coresPerSocket
		llcCores = map[int][]int{}
		llcOf = map[int]int{}
		for _, p := range pkgIDs {
			k := pkgs[p][0]
			for _, core := range pkgs[p] {
				llcOf[core] = k
				llcCores[k] = append(llcCores[k], core)
			}
		}
	}
	f.CoresPerLLC = d.coresPerLLC
	f.ThreadsPerCore = d.threads

	// Simulated core order: package by package (by package id), LLC by
	// LLC within it (by lowest CPU), core by core within the LLC (by
	// lowest CPU).
	var order []int // core keys in simulated order
	for _, p := range pkgIDs {
		var llcs []int
		seen := map[int]bool{}
		for _, core := range pkgs[p] {
			if k := llcOf[core]; !seen[k] {
				seen[k] = true
				llcs = append(llcs, k)
			}
		}
		sort.Slice(llcs, func(i, j int) bool { return minInt(llcCores[llcs[i]]) < minInt(llcCores[llcs[j]]) })
		for _, k := range llcs {
			cs := append([]int(nil), llcCores[k]...)
			sort.Ints(cs)
			order = append(order, cs...)
		}
	}
	n := len(d.cpus_)
	nCores := len(order)
	simOf := func(numbering string) []int { // sim id -> real id
		m := make([]int, n)
		for core, key := range order {
			for th, real := range d.byID[key].Threads {
				var sim int
				if numbering == machine.Interleaved {
					sim = th*nCores + core
				} else {
					sim = core*d.threads + th
				}
				m[sim] = real
			}
		}
		return m
	}
	identity := func(m []int) bool {
		for i, r := range m {
			if i != r {
				return false
			}
		}
		return true
	}
	inter, contig := simOf(machine.Interleaved), simOf(machine.Contiguous)
	switch {
	case identity(inter):
		d.numbering, d.r.SimToReal, f.NumberingExact = machine.Interleaved, inter, true
	case identity(contig):
		d.numbering, d.r.SimToReal, f.NumberingExact = machine.Contiguous, contig, true
	default:
		// Pick the scheme the sibling layout resembles.
		d.numbering, d.r.SimToReal = machine.Interleaved, inter
		if t := d.byID[order[0]].Threads; len(t) > 1 && t[1] == t[0]+1 {
			d.numbering, d.r.SimToReal = machine.Contiguous, contig
		}
		var pairs []string
		for sim, real := range d.r.SimToReal {
			if sim != real {
				pairs = append(pairs, fmt.Sprintf("%d→%d", sim, real))
			}
		}
		if len(pairs) > 24 {
			pairs = append(pairs[:24], fmt.Sprintf("… (%d more)", len(pairs)-24))
		}
		d.fallback("the real CPU numbering fits neither scheme of the preset schema: modelled as %s, so simulated CPU ids differ from real ones (simulated→real: %s); translate cpus= lists", d.numbering, strings.Join(pairs, ", "))
	}
	f.Numbering = d.numbering
}

// readLLCs sets each CPU's LLC from cache/index*/: the highest-level
// data or unified cache, its shared_cpu_list.
func (d *detector) readLLCs() {
	on := map[int]bool{}
	for _, c := range d.cpus_ {
		on[c.ID] = true
	}
	var missing []int
	for i := range d.cpus_ {
		c := &d.cpus_[i]
		best := -1
		for _, idx := range readNumbered(d.fsys, fmt.Sprintf("%s/cpu%d/cache", sysCPU, c.ID), "index") {
			dir := fmt.Sprintf("%s/cpu%d/cache/index%d", sysCPU, c.ID, idx)
			level, ok := readInt(d.fsys, dir+"/level")
			typ, _ := readString(d.fsys, dir+"/type")
			if !ok || typ == "Instruction" || level < best {
				continue
			}
			s, ok := readString(d.fsys, dir+"/shared_cpu_list")
			if !ok {
				continue
			}
			l, err := parseCPUList(s)
			if err != nil {
				continue
			}
			l = intersect(l, on)
			if !containsInt(l, c.ID) {
				continue
			}
			best, c.LLC = level, l
		}
		if c.LLC == nil {
			missing = append(missing, c.ID)
		}
	}
	if len(missing) == len(d.cpus_) {
		d.fallback("no cache information (%s/cpu<N>/cache/index*): one LLC spanning each package assumed", sysCPU)
	} else if len(missing) > 0 {
		d.fallback("CPUs %s have no cache information: one LLC spanning each package assumed", formatCPUList(missing))
	}
	// Every CPU of an LLC must name the same span.
	for _, c := range d.cpus_ {
		for _, o := range c.LLC {
			if oc := d.byID[o]; oc.LLC != nil && !equalInts(oc.LLC, c.LLC) {
				d.fallback("CPU %d and CPU %d disagree about their LLC (%s vs %s): one LLC per package assumed", c.ID, o, formatCPUList(c.LLC), formatCPUList(oc.LLC))
				for j := range d.cpus_ {
					d.cpus_[j].LLC = nil
				}
				return
			}
		}
	}
}

// caches reads the sizes the migration model uses: the caches private to
// a core (L1D + L2 where not shared beyond the core) and the LLC.
func (d *detector) caches() {
	c := d.cpus_[0]
	f := &d.r.Found
	for _, idx := range readNumbered(d.fsys, fmt.Sprintf("%s/cpu%d/cache", sysCPU, c.ID), "index") {
		dir := fmt.Sprintf("%s/cpu%d/cache/index%d", sysCPU, c.ID, idx)
		typ, _ := readString(d.fsys, dir+"/type")
		if typ == "Instruction" {
			continue
		}
		s, ok := readString(d.fsys, dir+"/size")
		if !ok {
			continue
		}
		kib, err := parseSize(s)
		if err != nil {
			continue
		}
		sl, _ := readString(d.fsys, dir+"/shared_cpu_list")
		shared, _ := parseCPUList(sl)
		shared = intersect(shared, setOf(f.CPUs))
		switch {
		case c.LLC != nil && equalInts(shared, c.LLC) && len(c.LLC) > len(c.Threads):
			f.LLCKiB = kib
		case len(shared) <= len(c.Threads):
			f.PrivateKiB += kib
			if c.LLC != nil && equalInts(shared, c.LLC) {
				f.LLCKiB = kib // the LLC is the core's own cache
			}
		}
	}
	if f.LLCKiB == 0 || f.PrivateKiB == 0 {
		d.cacheNotes = append(d.cacheNotes, "missing: cache sizes unknown: the engine's defaults (512 KiB private per core, 2 MiB of LLC per core) apply to the migration refill model")
		f.LLCKiB, f.PrivateKiB = 0, 0
	}
	if f.LLCKiB > 1<<22 {
		f.LLCKiB = 1 << 22
	}
	if f.PrivateKiB > 1<<20 {
		f.PrivateKiB = 1 << 20
	}
}

// idle reads the cpuidle driver, governor and the first CPU's states.
func (d *detector) idle() {
	f := &d.r.Found
	base := sysCPU + "/cpuidle"
	f.IdleDriver, _ = readString(d.fsys, base+"/current_driver")
	gov, ok := readString(d.fsys, base+"/current_governor")
	if !ok {
		gov, _ = readString(d.fsys, base+"/current_governor_ro")
	}
	f.Governor = gov
	first := d.cpus_[0].ID
	states := readNumbered(d.fsys, fmt.Sprintf("%s/cpu%d/cpuidle", sysCPU, first), "state")
	if f.IdleDriver == "none" || len(states) == 0 {
		why := "no cpuidle directory"
		switch {
		case f.IdleDriver == "none":
			why = "cpuidle reports current_driver none"
		case exists(d.fsys, base):
			why = fmt.Sprintf("no cpu%d/cpuidle/state* directories", first)
		}
		// default_idle's HLT on x86 (interrupt-driven; a CPU whose
		// kernel prefers mwait_idle would be woken by the store instead,
		// which sysfs does not say); elsewhere WFI or a hypervisor yield,
		// also interrupt-driven.
		name, entry := "HLT", machine.EntryHLT
		if info, ok := readString(d.fsys, "proc/cpuinfo"); ok && !strings.Contains(info, "vendor_id") {
			name, entry = "idle", ""
		}
		d.idleDriver = machine.IdleDriverNone
		d.idleStates = []machine.IdleState{{Name: name, ExitLatencyUS: 1, TargetResidencyUS: 2, Entry: entry}}
		d.fallback("%s: idle modelled as a kernel without a cpuidle driver (idle_driver \"none\": default_idle, one %s state, exit assumed 1 µs as declared by ACPI C1; measure replaces it with the measured idle exit)", why, name)
		f.IdleStates = []string{name}
		return
	}
	type st struct {
		machine.IdleState
		idx int
	}
	var list []st
	for _, i := range states {
		dir := fmt.Sprintf("%s/cpu%d/cpuidle/state%d", sysCPU, first, i)
		name, _ := readString(d.fsys, dir+"/name")
		if name == "" {
			name = fmt.Sprintf("state%d", i)
		}
		lat, ok1 := readInt(d.fsys, dir+"/latency")
		res, ok2 := readInt(d.fsys, dir+"/residency")
		if !ok1 || !ok2 {
			d.fallback("cpu%d/cpuidle/state%d (%s) lacks latency or residency: state left out", first, i, name)
			continue
		}
		dis, _ := readString(d.fsys, dir+"/disable")
		desc, _ := readString(d.fsys, dir+"/desc")
		s := machine.IdleState{Name: name, ExitLatencyUS: int64(lat), TargetResidencyUS: int64(res), Disabled: dis == "1"}
		var known bool
		if s.Entry, known = entryFromDesc(desc); !known {
			d.fallback("idle state %s: desc %q names no entry method known here (POLL, MWAIT, IOPORT, HLT, stop): modelled as interrupt-driven (woken by an IPI)", name, desc)
		}
		list = append(list, st{s, i})
	}
	if len(list) == 0 {
		d.idleDriver = machine.IdleDriverNone
		d.idleStates = []machine.IdleState{{Name: "HLT", ExitLatencyUS: 1, TargetResidencyUS: 2, Entry: machine.EntryHLT}}
		d.fallback("no readable idle state: idle modelled as a kernel without a cpuidle driver (one HLT state, exit 1 µs assumed)")
		f.IdleStates = []string{"HLT"}
		return
	}
	if len(list) > machine.MaxIdleStates {
		var dropped []string
		for _, s := range list[machine.MaxIdleStates:] {
			dropped = append(dropped, s.Name)
		}
		d.fallback("%d idle states, the schema holds %d: the deepest (%s) left out", len(list), machine.MaxIdleStates, strings.Join(dropped, ", "))
		list = list[:machine.MaxIdleStates]
	}
	for i := range list {
		s := &list[i].IdleState
		// The kernel's polling state (drivers/cpuidle/poll_state.c) is
		// named POLL and declares 0/0.
		s.Polling = i == 0 && s.Name == "POLL" && s.ExitLatencyUS == 0 && s.TargetResidencyUS == 0
		if s.Polling {
			s.Entry = machine.EntryPoll
		} else if s.Entry == machine.EntryPoll {
			s.Entry = "" // a poll desc on a state the schema cannot call polling
		}
		if s.ExitLatencyUS > 100000 {
			d.fallback("idle state %s declares %d µs exit latency: clamped to 100000", s.Name, s.ExitLatencyUS)
			s.ExitLatencyUS = 100000
		}
		if s.TargetResidencyUS > 1000000 {
			d.fallback("idle state %s declares %d µs target residency: clamped to 1000000", s.Name, s.TargetResidencyUS)
			s.TargetResidencyUS = 1000000
		}
		if i > 0 {
			p := list[i-1].IdleState
			if s.ExitLatencyUS < p.ExitLatencyUS || s.TargetResidencyUS < p.TargetResidencyUS {
				d.fallback("idle state %s (%d/%d µs) is shallower than %s before it (%d/%d µs): raised to keep the list ordered, as the schema requires", s.Name, s.ExitLatencyUS, s.TargetResidencyUS, p.Name, p.ExitLatencyUS, p.TargetResidencyUS)
				s.ExitLatencyUS = max(s.ExitLatencyUS, p.ExitLatencyUS)
				s.TargetResidencyUS = max(s.TargetResidencyUS, p.TargetResidencyUS)
			}
		}
		// Assumed: C3/C6-class states (declared exit above 10 µs) power
		// the core down, which needs every sibling idle.
		s.CoreLevel = !s.Polling && s.ExitLatencyUS > 10
		d.idleStates = append(d.idleStates, *s)
		label := fmt.Sprintf("%s %d/%d µs", s.Name, s.ExitLatencyUS, s.TargetResidencyUS)
		if s.Disabled {
			label += " (disabled)"
		}
		f.IdleStates = append(f.IdleStates, label)
	}
	// Other CPUs with different states (a per-CPU disable) are reported.
	for _, c := range d.cpus_[1:] {
		other := readNumbered(d.fsys, fmt.Sprintf("%s/cpu%d/cpuidle", sysCPU, c.ID), "state")
		same := len(other) == len(states)
		for k := 0; same && k < len(list); k++ {
			dir := fmt.Sprintf("%s/cpu%d/cpuidle/state%d", sysCPU, c.ID, list[k].idx)
			name, _ := readString(d.fsys, dir+"/name")
			dis, _ := readString(d.fsys, dir+"/disable")
			same = name == list[k].Name && (dis == "1") == list[k].Disabled
		}
		if !same {
			d.fallback("CPU %d's idle states (or their disable switches) differ from CPU %d's: the simulator gives every CPU CPU %d's", c.ID, first, first)
			break
		}
	}
}

// entryFromDesc reads how a state is entered from its sysfs desc, as the
// drivers write it: "CPUIDLE CORE POLL IDLE" (poll_state.c), "MWAIT 0x20"
// (intel_idle), "ACPI FFH MWAIT 0x0" / "ACPI IOPORT 0x414" / "ACPI HLT"
// (acpi_idle's acpi_processor_power_verify; older kernels say "ACPI FFH
// INTEL MWAIT"), "stop0_lite" and friends (cpuidle-powernv, which copies
// the name). It reports false for a desc it does not know.
func entryFromDesc(desc string) (string, bool) {
	switch f := strings.Fields(strings.ToUpper(desc)); {
	case len(f) == 0:
		return "", false
	case slices.Contains(f, "POLL"):
		return machine.EntryPoll, true
	case slices.Contains(f, "MWAIT"):
		return machine.EntryMWAIT, true
	case slices.Contains(f, "IOPORT"):
		return machine.EntryIOPort, true
	case slices.Contains(f, "HLT"):
		return machine.EntryHLT, true
	case strings.HasPrefix(f[0], "STOP"):
		return machine.EntryStop, true
	}
	return "", false
}

// identity reads the kernel version and CPU model.
func (d *detector) identity() {
	f := &d.r.Found
	if s, ok := readString(d.fsys, "proc/sys/kernel/osrelease"); ok {
		f.Kernel = s
	} else {
		d.fallback("no proc/sys/kernel/osrelease: kernel version unknown")
	}
	if info, ok := readString(d.fsys, "proc/cpuinfo"); ok {
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(line, ":")
			k = strings.TrimSpace(k)
			if ok && (k == "model name" || k == "cpu" && f.CPUModel == "" || k == "Model" && f.CPUModel == "") {
				f.CPUModel = strings.Join(strings.Fields(v), " ")
				if k == "model name" {
					break
				}
			}
		}
	}
	if f.CPUModel == "" {
		d.fallback("no CPU model name in proc/cpuinfo")
	}
}

// smtThroughput is the assumed SMT gain: +25% per extra busy thread.
func smtThroughput(threads int) []float64 {
	out := make([]float64, threads)
	for k := range out {
		out[k] = 1 + 0.25*float64(k)
	}
	return out
}

// build assembles the spec.
func (d *detector) build(opt Options) *Result {
	f := &d.r.Found
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	name := opt.Name
	if name == "" {
		name = "detected"
	}
	model, kernel := f.CPUModel, f.Kernel
	if model == "" {
		model = "unknown CPU"
	}
	if kernel == "" {
		kernel = "unknown"
	}
	n := len(f.CPUs)
	s := &machine.Spec{
		Name:  name,
		Kind:  "machine",
		Title: fmt.Sprintf("%s: %d socket(s) × %d cores × %d thread(s) = %d CPUs (detected)", model, d.sockets, d.coresPerSocket, d.threads, n),
		Source: fmt.Sprintf("schedsim machine detect on %s: Linux %s, %s",
			now.UTC().Format("2006-01-02"), kernel, model),
		Topology: machine.TopologySpec{
			Sockets: d.sockets, CoresPerSocket: d.coresPerSocket, ThreadsPerCore: d.threads,
			CoresPerLLC: d.coresPerLLC, Numbering: d.numbering,
		},
		SMTThroughput: smtThroughput(d.threads),
		IdleStates:    d.idleStates,
		IdleDriver:    d.idleDriver,
		Cache:         machine.CacheSpec{CorePrivateKB: f.PrivateKiB, LLCKB: f.LLCKiB},
		Costs:         map[string]int64{},
		CostNotes:     map[string]string{},
	}
	llcDesc := fmt.Sprintf("%d LLCs of %d cores (from cache/index*/shared_cpu_list)", f.LLCs, d.coresPerLLC)
	if f.LLCs == 0 {
		llcDesc = fmt.Sprintf("one LLC per package assumed (%d cores)", d.coresPerLLC)
	}
	s.Notes = append(s.Notes,
		fmt.Sprintf("detected: %d online CPUs (%s): %d package(s), %d die(s), %d cores, %d thread(s) per core; %s; numbering %s%s.",
			n, formatCPUList(f.CPUs), f.Sockets, f.Dies, f.Cores, d.threads, llcDesc, d.numbering,
			map[bool]string{true: " (simulated CPU n is real CPU n)", false: " (simulated ids differ from real ones)"}[f.NumberingExact]))
	if f.Dies > f.Sockets {
		s.Notes = append(s.Notes, fmt.Sprintf("detected: %d dies in %d package(s); the schema has no die level between LLC and package (sched_domain DIE spans the package here).", f.Dies, f.Sockets))
	}
	if len(f.Offline) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("detected: CPUs %s present but offline: not modelled.", formatCPUList(f.Offline)))
	}
	if f.Nodes > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("detected: %d NUMA node(s), distances %v; the simulator's NUMA level is the package (one node per socket)%s.",
			f.Nodes, f.NodeDistances, map[bool]string{true: "", false: fmt.Sprintf(": the %d nodes on %d package(s) (SNC/NPS) are not modelled", f.Nodes, f.Sockets)}[f.Nodes == f.Sockets]))
	}
	if d.idleDriver == machine.IdleDriverNone {
		why := fmt.Sprintf("current_driver %q", f.IdleDriver)
		if f.IdleDriver == "" {
			why = "no cpuidle in sysfs"
		}
		s.Notes = append(s.Notes, fmt.Sprintf("detected: no cpuidle driver (%s): idle_driver none, one state.", why))
	} else {
		s.Notes = append(s.Notes, fmt.Sprintf("detected: cpuidle driver %s, governor %s, states %s (name exit/residency as declared in sysfs).",
			orUnknown(f.IdleDriver), orUnknown(f.Governor), strings.Join(f.IdleStates, ", ")))
		s.Notes = append(s.Notes, "assumed: measured_exit_ns 0 (exits cost what they declare); states declaring more than 10 µs (C3/C6 class) need the whole core idle (core_level).")
	}
	if gov := f.Governor; gov != "" {
		switch gov {
		case "menu":
		case "teo":
			s.Notes = append(s.Notes, "detected: governor teo: run with --set cpuidle_governor=teo to match (the preset cannot set it; the simulator defaults to menu).")
		default:
			s.Notes = append(s.Notes, fmt.Sprintf("detected: governor %s is not modelled (the simulator has menu, teo, none); menu is used.", gov))
		}
	}
	if f.LLCKiB > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("detected: caches: %d KiB private per core (L1D + private L2), %d KiB LLC.", f.PrivateKiB, f.LLCKiB))
	}
	s.Notes = append(s.Notes, d.cacheNotes...)
	if d.threads > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("assumed: SMT throughput %v (+25%% per extra busy thread; not measured).", s.SMTThroughput))
	}
	for _, fb := range d.r.Fallbacks {
		s.Notes = append(s.Notes, "missing: "+fb)
	}
	date := now.UTC().Format("2006-01-02")
	for _, def := range knob.Table() {
		if def.Group != knob.Cost {
			continue
		}
		s.Costs[def.Name] = def.Default
		s.CostNotes[def.Name] = fmt.Sprintf("assumed: the knob's default (not measured by schedsim machine detect on %s)", date)
	}
	d.r.Spec = s
	d.r.Real = d.cpus_
	return d.r
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func readInt(fsys fs.FS, name string) (int, bool) {
	s, ok := readString(fsys, name)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return v, true
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func diff(a, b []int) []int {
	in := setOf(b)
	var out []int
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func setOf(l []int) map[int]bool {
	m := make(map[int]bool, len(l))
	for _, x := range l {
		m[x] = true
	}
	return m
}

func minInt(l []int) int {
	m := l[0]
	for _, x := range l[1:] {
		m = min(m, x)
	}
	return m
}

func sortedKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sortInts(l []int) { sort.Ints(l) }

// JSON renders the spec as an indented preset document (keys of costs and
// cost_notes sorted), ending in a newline.
func (r *Result) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Spec); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
