package detect

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The fake trees under testdata/*.txtar follow the public sysfs layout
// (Documentation/ABI/stable/sysfs-devices-system-cpu,
// Documentation/ABI/testing/sysfs-devices-system-cpu, sysfs-devices-node)
// with the quirks real machines show: core_id values with gaps that repeat
// across packages, x86's interleaved enumeration across sockets, L1/L2
// shared by SMT siblings only, cpuidle states with a disable switch, and a
// VM without cache, node or cpuidle directories. They are written by
//
//	go test ./detect -run TestFixtures -update
//
// and committed; the tests read the committed files.
var update = flag.Bool("update", false, "rewrite testdata/*.txtar from the generators")

type tree map[string]string

func (t tree) put(path, content string) { t[path] = content + "\n" }

func (t tree) archive(comment string) []byte {
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString(comment)
	for _, p := range paths {
		fmt.Fprintf(&b, "-- %s --\n%s", p, t[p])
	}
	return []byte(b.String())
}

type cacheLevel struct {
	level  int
	typ    string
	size   string
	shared func(cpu int) []int
}

type idleState struct {
	name, desc   string
	lat, res     int
	disable      int
	defaultState string
}

// x86 describes a generated x86 box.
type x86 struct {
	cpus       int
	pkg        func(cpu int) int
	coreID     func(cpu int) int
	siblings   func(cpu int) []int
	pkgCPUs    func(p int) []int
	caches     []cacheLevel
	driver     string
	governor   string
	states     []idleState
	nodes      [][]int
	distances  []string
	model      string
	vendor     string
	kernel     string
	possible   string
	noCpuidle  bool
	noNodeDir  bool
	noCacheDir bool
}

func list(l []int) string { return formatCPUList(l) }

func mask(l []int, ncpus int) string {
	// A hex cpumask as sysfs prints it (%*pb): nr_cpu_ids bits, in
	// comma-separated 32-bit words, the top word only as wide as needed.
	digits := make([]byte, (ncpus+3)/4)
	for i := range digits {
		var v int
		for b := 0; b < 4; b++ {
			if containsInt(l, 4*(len(digits)-1-i)+b) {
				v |= 1 << b
			}
		}
		digits[i] = "0123456789abcdef"[v]
	}
	var out []byte
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%8 == 0 {
			out = append(out, ',')
		}
		out = append(out, d)
	}
	return string(out)
}

func (m x86) tree() tree {
	t := tree{}
	all := make([]int, m.cpus)
	for i := range all {
		all[i] = i
	}
	base := "sys/devices/system/cpu"
	t.put(base+"/online", list(all))
	t.put(base+"/present", list(all))
	t.put(base+"/possible", m.possible)
	t.put(base+"/offline", "")
	t.put(base+"/kernel_max", "8191")
	t.put(base+"/smt/active", map[bool]string{true: "1", false: "0"}[len(m.siblings(0)) > 1])
	t.put(base+"/smt/control", map[bool]string{true: "on", false: "notsupported"}[len(m.siblings(0)) > 1])
	if !m.noCpuidle {
		t.put(base+"/cpuidle/current_driver", m.driver)
		t.put(base+"/cpuidle/current_governor_ro", m.governor)
		t.put(base+"/cpuidle/available_governors", "ladder menu teo")
	}
	for c := 0; c < m.cpus; c++ {
		d := fmt.Sprintf("%s/cpu%d", base, c)
		p := m.pkg(c)
		sib := m.siblings(c)
		pk := m.pkgCPUs(p)
		t.put(d+"/topology/physical_package_id", fmt.Sprint(p))
		t.put(d+"/topology/die_id", "0")
		t.put(d+"/topology/core_id", fmt.Sprint(m.coreID(c)))
		t.put(d+"/topology/thread_siblings_list", list(sib))
		t.put(d+"/topology/thread_siblings", mask(sib, m.cpus))
		t.put(d+"/topology/core_cpus_list", list(sib))
		t.put(d+"/topology/core_cpus", mask(sib, m.cpus))
		t.put(d+"/topology/core_siblings_list", list(pk))
		t.put(d+"/topology/package_cpus_list", list(pk))
		t.put(d+"/topology/die_cpus_list", list(pk))
		t.put(d+"/topology/cluster_id", "65535")
		if c > 0 {
			t.put(d+"/online", "1")
		}
		if !m.noCacheDir {
			for i, cl := range m.caches {
				cd := fmt.Sprintf("%s/cache/index%d", d, i)
				sh := cl.shared(c)
				t.put(cd+"/level", fmt.Sprint(cl.level))
				t.put(cd+"/type", cl.typ)
				t.put(cd+"/size", cl.size)
				t.put(cd+"/shared_cpu_list", list(sh))
				t.put(cd+"/shared_cpu_map", mask(sh, m.cpus))
				t.put(cd+"/coherency_line_size", "64")
				t.put(cd+"/id", fmt.Sprint(sh[0]))
			}
		}
		if !m.noCpuidle {
			for i, st := range m.states {
				sd := fmt.Sprintf("%s/cpuidle/state%d", d, i)
				t.put(sd+"/name", st.name)
				t.put(sd+"/desc", st.desc)
				t.put(sd+"/latency", fmt.Sprint(st.lat))
				t.put(sd+"/residency", fmt.Sprint(st.res))
				t.put(sd+"/disable", fmt.Sprint(st.disable))
				t.put(sd+"/default_status", st.defaultState)
				t.put(sd+"/usage", "0")
				t.put(sd+"/time", "0")
			}
		}
	}
	if !m.noNodeDir {
		var ids []int
		for n := range m.nodes {
			ids = append(ids, n)
		}
		t.put("sys/devices/system/node/online", list(ids))
		t.put("sys/devices/system/node/possible", list(ids))
		t.put("sys/devices/system/node/has_cpu", list(ids))
		for n, cpus := range m.nodes {
			nd := fmt.Sprintf("sys/devices/system/node/node%d", n)
			t.put(nd+"/cpulist", list(cpus))
			t.put(nd+"/cpumap", mask(cpus, m.cpus))
			t.put(nd+"/distance", m.distances[n])
		}
	}
	var info strings.Builder
	for c := 0; c < m.cpus; c++ {
		fmt.Fprintf(&info, "processor\t: %d\nvendor_id\t: %s\nmodel name\t: %s\nphysical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n\n",
			c, m.vendor, m.model, m.pkg(c), len(m.pkgCPUs(m.pkg(c))), m.coreID(c), len(m.pkgCPUs(m.pkg(c)))/len(m.siblings(c)))
	}
	t["proc/cpuinfo"] = info.String()
	t.put("proc/sys/kernel/osrelease", m.kernel)
	return t
}

// intel2s is a shrunk 2-socket Skylake-SP (Xeon Gold 6130 class): 2
// packages × 4 cores × 2 threads; CPU n and n+8 are siblings, CPUs 0-3
// and 8-11 are package 0. core_id has gaps (0, 1, 4, 8) and repeats in
// both packages, as on real Xeons. intel_idle's SKX table, C6 disabled by
// the administrator.
func intel2s() x86 {
	cores := []int{0, 1, 4, 8}
	pkgCPUs := func(p int) []int {
		return []int{4 * p, 4*p + 1, 4*p + 2, 4*p + 3, 8 + 4*p, 9 + 4*p, 10 + 4*p, 11 + 4*p}
	}
	sib := func(c int) []int { return []int{c % 8, c%8 + 8} }
	return x86{
		cpus:     16,
		pkg:      func(c int) int { return (c % 8) / 4 },
		coreID:   func(c int) int { return cores[c%4] },
		siblings: sib,
		pkgCPUs:  pkgCPUs,
		caches: []cacheLevel{
			{1, "Data", "32K", sib},
			{1, "Instruction", "32K", sib},
			{2, "Unified", "1024K", sib},
			{3, "Unified", "22528K", func(c int) []int { return pkgCPUs((c % 8) / 4) }},
		},
		driver:   "intel_idle",
		governor: "menu",
		states: []idleState{
			{"POLL", "CPUIDLE CORE POLL IDLE", 0, 0, 0, "enabled"},
			{"C1", "MWAIT 0x00", 2, 2, 0, "enabled"},
			{"C1E", "MWAIT 0x01", 10, 20, 0, "enabled"},
			{"C6", "MWAIT 0x20", 133, 600, 1, "enabled"},
		},
		nodes:     [][]int{pkgCPUs(0), pkgCPUs(1)},
		distances: []string{"10 21", "21 10"},
		model:     "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz",
		vendor:    "GenuineIntel",
		kernel:    "5.15.0-91-generic",
		possible:  "0-15",
	}
}

// amdCCX is a Ryzen 9 3950X (Zen 2): one package, 16 cores in four CCXs
// of 4 cores, each CCX with its own 16 MiB L3; CPU n and n+16 are
// siblings. acpi_idle with the firmware's 400 µs C2 and the teo governor.
func amdCCX() x86 {
	sib := func(c int) []int { return []int{c % 16, c%16 + 16} }
	ccx := func(c int) []int {
		k := (c % 16) / 4
		return []int{4 * k, 4*k + 1, 4*k + 2, 4*k + 3, 16 + 4*k, 17 + 4*k, 18 + 4*k, 19 + 4*k}
	}
	all := make([]int, 32)
	for i := range all {
		all[i] = i
	}
	return x86{
		cpus:     32,
		pkg:      func(int) int { return 0 },
		coreID:   func(c int) int { return c % 16 },
		siblings: sib,
		pkgCPUs:  func(int) []int { return all },
		caches: []cacheLevel{
			{1, "Data", "32K", sib},
			{1, "Instruction", "32K", sib},
			{2, "Unified", "512K", sib},
			{3, "Unified", "16384K", ccx},
		},
		driver:   "acpi_idle",
		governor: "teo",
		states: []idleState{
			{"POLL", "CPUIDLE CORE POLL IDLE", 0, 0, 0, "enabled"},
			{"C1", "ACPI FFH MWAIT 0x0", 1, 2, 0, "enabled"},
			{"C2", "ACPI IOPORT 0x814", 400, 800, 0, "enabled"},
		},
		nodes:     [][]int{all},
		distances: []string{"10"},
		model:     "AMD Ryzen 9 3950X 16-Core Processor",
		vendor:    "AuthenticAMD",
		kernel:    "6.8.0-45-generic",
		possible:  "0-31",
	}
}

// vm2 is a small KVM guest: 2 vCPUs, each its own core; no cache, node
// or cpuidle directories (as some hypervisors and container sysfs views
// show), possible CPUs beyond the present ones (hotplug slots).
func vm2() x86 {
	return x86{
		cpus:       2,
		pkg:        func(int) int { return 0 },
		coreID:     func(c int) int { return c },
		siblings:   func(c int) []int { return []int{c} },
		pkgCPUs:    func(int) []int { return []int{0, 1} },
		noCacheDir: true,
		noCpuidle:  true,
		noNodeDir:  true,
		model:      "Intel Xeon Processor (Cascadelake)",
		vendor:     "GenuineIntel",
		kernel:     "6.1.0-18-cloud-amd64",
		possible:   "0-7",
	}
}

var fixtures = []struct {
	name    string
	comment string
	gen     func() x86
}{
	{"intel-2s-4c-2t", "A shrunk 2-socket Skylake-SP: 2 packages x 4 cores x 2 threads, interleaved\nnumbering, intel_idle with C6 disabled, 2 NUMA nodes. Generated by\nfixtures_test.go (go test ./detect -run TestFixtures -update).\n", intel2s},
	{"amd-3950x-4ccx", "A Ryzen 9 3950X: 1 package, 16 cores in 4 CCXs of 4 cores (one L3 each),\nSMT2 interleaved, acpi_idle with a 400 us C2, teo governor. Generated by\nfixtures_test.go (go test ./detect -run TestFixtures -update).\n", amdCCX},
	{"vm-2vcpu", "A 2-vCPU KVM guest without cache, node or cpuidle directories. Generated\nby fixtures_test.go (go test ./detect -run TestFixtures -update).\n", vm2},
}

// TestFixtures checks the committed trees match their generators (or
// rewrites them with -update).
func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		want := f.gen().tree().archive(f.comment)
		path := filepath.Join("testdata", f.name+".txtar")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./detect -run TestFixtures -update)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from its generator (run go test ./detect -run TestFixtures -update)", path)
		}
	}
}
