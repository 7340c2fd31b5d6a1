package detect

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"schedplay/engine"
	"schedplay/engine/machine"
	"schedplay/presets"
	"schedplay/scenario"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func detectArchive(t *testing.T, name string) *Result {
	t.Helper()
	fsys, err := Open(filepath.Join("testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Detect(fsys, Options{Name: name, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// loadsAndRuns checks the preset the result renders parses with the
// presets loader and runs a few ms of a pipe and a hackbench workload.
func loadsAndRuns(t *testing.T, r *Result) *machine.Spec {
	t.Helper()
	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := presets.ParseMachine(data, r.Spec.Name+".json")
	if err != nil {
		t.Fatalf("the detected preset does not load: %v\n%s", err, data)
	}
	for _, w := range []string{"pipe:l=200", "hackbench:g=1,l=10"} {
		// 200 ms: a preset measured on a loaded box can carry
		// millisecond-scale costs (a 10 ms context switch was seen at
		// load 12), and it must still show wakeups.
		res, err := scenario.Run(scenario.Config{Machine: spec, Preset: spec.Name, Workloads: []string{w}, Seed: 1, Duration: 200 * engine.Millisecond, Debug: true})
		if err != nil {
			t.Fatalf("%s on the detected preset: %v", w, err)
		}
		if res.Search.Wakeups == 0 || res.Events == 0 {
			t.Errorf("%s on the detected preset: no wakeups in 200 ms (%d events)", w, res.Events)
		}
	}
	return spec
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func TestIntelTwoSocketSMT(t *testing.T) {
	r := detectArchive(t, "intel-2s-4c-2t")
	f := r.Found
	if f.Sockets != 2 || f.Cores != 8 || f.ThreadsPerCore != 2 || f.LLCs != 2 || f.CoresPerLLC != 4 || f.Nodes != 2 || f.Dies != 2 {
		t.Errorf("found %+v; want 2 sockets, 8 cores, 2 threads, 2 LLCs of 4 cores, 2 nodes, 2 dies", f)
	}
	if f.Numbering != machine.Interleaved || !f.NumberingExact {
		t.Errorf("numbering %s exact=%v; want interleaved, exact", f.Numbering, f.NumberingExact)
	}
	if len(r.Fallbacks) != 0 {
		t.Errorf("a complete tree gave fallbacks: %q", r.Fallbacks)
	}
	s := r.Spec
	want := machine.TopologySpec{Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 2, CoresPerLLC: 4, Numbering: machine.Interleaved}
	if s.Topology != want {
		t.Errorf("topology %+v; want %+v", s.Topology, want)
	}
	if f.IdleDriver != "intel_idle" || f.Governor != "menu" || s.IdleDriver != "" {
		t.Errorf("driver %q governor %q idle_driver %q; want intel_idle, menu, \"\"", f.IdleDriver, f.Governor, s.IdleDriver)
	}
	wantStates := []machine.IdleState{
		{Name: "POLL", Polling: true, Entry: machine.EntryPoll},
		{Name: "C1", ExitLatencyUS: 2, TargetResidencyUS: 2, Entry: machine.EntryMWAIT},
		{Name: "C1E", ExitLatencyUS: 10, TargetResidencyUS: 20, Entry: machine.EntryMWAIT},
		{Name: "C6", ExitLatencyUS: 133, TargetResidencyUS: 600, Disabled: true, CoreLevel: true, Entry: machine.EntryMWAIT},
	}
	if len(s.IdleStates) != len(wantStates) {
		t.Fatalf("idle states %+v; want %+v", s.IdleStates, wantStates)
	}
	for i := range wantStates {
		if s.IdleStates[i] != wantStates[i] {
			t.Errorf("idle state %d: %+v; want %+v", i, s.IdleStates[i], wantStates[i])
		}
	}
	if s.Cache.CorePrivateKB != 32+1024 || s.Cache.LLCKB != 22528 {
		t.Errorf("cache %+v; want 1056 KiB private, 22528 KiB LLC", s.Cache)
	}
	if !strings.Contains(s.Source, "5.15.0-91-generic") || !strings.Contains(s.Source, "Xeon(R) Gold 6130") || !strings.Contains(s.Source, "2026-01-02") {
		t.Errorf("source %q lacks the kernel, model or date", s.Source)
	}
	if !hasNote(s.Notes, "2 NUMA node(s), distances [[10 21] [21 10]]") {
		t.Errorf("notes lack the node distances: %q", s.Notes)
	}
	// Real CPU 8 is core 0's second thread: simulated 8 under interleaved.
	for sim, real := range r.SimToReal {
		if sim != real {
			t.Errorf("simulated CPU %d is real CPU %d; want the identity", sim, real)
		}
	}
	spec := loadsAndRuns(t, r)
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The simulated topology agrees with sysfs: CPU 0's sibling is 8, CPU
	// 4 is in the other socket, CPUs 0-3,8-11 share an LLC.
	if tp.Core[0] != tp.Core[8] || tp.Socket[0] == tp.Socket[4] || tp.LLC[3] != tp.LLC[11] || tp.LLC[3] == tp.LLC[4] {
		t.Errorf("simulated topology does not match sysfs: core %v socket %v llc %v", tp.Core, tp.Socket, tp.LLC)
	}
}

func TestAMDMultiCCX(t *testing.T) {
	r := detectArchive(t, "amd-3950x-4ccx")
	f := r.Found
	if f.Sockets != 1 || f.Cores != 16 || f.ThreadsPerCore != 2 || f.LLCs != 4 || f.CoresPerLLC != 4 || f.Nodes != 1 {
		t.Errorf("found %+v; want 1 socket, 16 cores, 2 threads, 4 LLCs of 4 cores, 1 node", f)
	}
	if len(r.Fallbacks) != 0 {
		t.Errorf("a complete tree gave fallbacks: %q", r.Fallbacks)
	}
	s := r.Spec
	want := machine.TopologySpec{Sockets: 1, CoresPerSocket: 16, ThreadsPerCore: 2, CoresPerLLC: 4, Numbering: machine.Interleaved}
	if s.Topology != want {
		t.Errorf("topology %+v; want %+v", s.Topology, want)
	}
	if f.IdleDriver != "acpi_idle" || f.Governor != "teo" {
		t.Errorf("driver %q governor %q; want acpi_idle, teo", f.IdleDriver, f.Governor)
	}
	if len(s.IdleStates) != 3 || s.IdleStates[2] != (machine.IdleState{Name: "C2", ExitLatencyUS: 400, TargetResidencyUS: 800, CoreLevel: true, Entry: machine.EntryIOPort}) || s.IdleStates[1].Entry != machine.EntryMWAIT {
		t.Errorf("idle states %+v; want POLL, C1 1/2 (FFH MWAIT), C2 400/800 core-level (IOPORT)", s.IdleStates)
	}
	if !hasNote(s.Notes, "--set cpuidle_governor=teo") {
		t.Errorf("notes do not say how to match the teo governor: %q", s.Notes)
	}
	if s.Cache.CorePrivateKB != 32+512 || s.Cache.LLCKB != 16384 {
		t.Errorf("cache %+v; want 544 KiB private, 16384 KiB LLC", s.Cache)
	}
	spec := loadsAndRuns(t, r)
	tp, err := machine.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	if tp.NLLC != 4 || tp.LLC[0] != tp.LLC[19] || tp.LLC[3] == tp.LLC[4] || tp.Core[5] != tp.Core[21] {
		t.Errorf("simulated LLCs do not match the CCXs: %v", tp.LLC)
	}
}

func TestSmallVMFallsBackVisibly(t *testing.T) {
	r := detectArchive(t, "vm-2vcpu")
	f := r.Found
	if f.Sockets != 1 || f.Cores != 2 || f.ThreadsPerCore != 1 || f.LLCs != 0 || f.CoresPerLLC != 2 || f.Nodes != 0 {
		t.Errorf("found %+v; want 1 socket, 2 single-thread cores, no LLC info (one LLC of 2 cores), no nodes", f)
	}
	s := r.Spec
	if s.IdleDriver != machine.IdleDriverNone || len(s.IdleStates) != 1 || s.IdleStates[0].Name != "HLT" {
		t.Errorf("idle %q %+v; want no cpuidle driver with one HLT state", s.IdleDriver, s.IdleStates)
	}
	for _, want := range []string{"no cache information", "no NUMA node directory", "no cpuidle directory"} {
		found := false
		for _, fb := range r.Fallbacks {
			found = found || strings.Contains(fb, want)
		}
		if !found {
			t.Errorf("fallbacks %q lack %q", r.Fallbacks, want)
		}
		if !hasNote(s.Notes, "missing: ") || !hasNote(s.Notes, want) {
			t.Errorf("notes lack %q: %q", want, s.Notes)
		}
	}
	if !hasNote(s.Notes, "cache sizes unknown") || s.Cache != (machine.CacheSpec{}) {
		t.Errorf("unknown caches not left to the engine's defaults with a note: %+v %q", s.Cache, s.Notes)
	}
	loadsAndRuns(t, r)
}

// TestEveryCostHasANote: detect writes every cost knob with a note that
// says it is assumed (Apply marks the measured ones).
func TestEveryCostHasANote(t *testing.T) {
	r := detectArchive(t, "vm-2vcpu")
	for k := range r.Spec.Costs {
		if !strings.HasPrefix(r.Spec.CostNotes[k], "assumed: ") {
			t.Errorf("cost %s note %q does not start with assumed:", k, r.Spec.CostNotes[k])
		}
	}
}

// tiny builds a tree of n CPUs with the given sibling lists.
func tiny(siblings []string) fstest.MapFS {
	m := fstest.MapFS{}
	put := func(p, s string) { m[p] = &fstest.MapFile{Data: []byte(s + "\n")} }
	put(sysCPU+"/online", formatCPUList(seq(len(siblings))))
	for c, sib := range siblings {
		d := sysCPU + "/cpu" + strconv.Itoa(c) + "/topology"
		put(d+"/physical_package_id", "0")
		put(d+"/core_id", strconv.Itoa(c))
		put(d+"/thread_siblings_list", sib)
	}
	return m
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestNumbering(t *testing.T) {
	for _, tc := range []struct {
		name     string
		siblings []string
		want     string
		exact    bool
		threads  int
		fallback string
	}{
		{"contiguous SMT4 (POWER)", []string{"0-3", "0-3", "0-3", "0-3", "4-7", "4-7", "4-7", "4-7"}, machine.Contiguous, true, 4, ""},
		{"interleaved", []string{"0,2", "1,3", "0,2", "1,3"}, machine.Interleaved, true, 2, ""},
		{"neither", []string{"0,3", "1,2", "1,2", "0,3"}, machine.Interleaved, false, 2, "fits neither scheme"},
		{"hybrid", []string{"0-1", "0-1", "2", "3"}, machine.Interleaved, true, 1, "cores differ in SMT threads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Detect(tiny(tc.siblings), Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			f := r.Found
			if f.Numbering != tc.want || f.NumberingExact != tc.exact || f.ThreadsPerCore != tc.threads {
				t.Errorf("numbering %s exact %v threads %d; want %s %v %d", f.Numbering, f.NumberingExact, f.ThreadsPerCore, tc.want, tc.exact, tc.threads)
			}
			if tc.fallback != "" && !hasNote(r.Fallbacks, tc.fallback) {
				t.Errorf("fallbacks %q lack %q", r.Fallbacks, tc.fallback)
			}
			// Whatever the numbering, simulated CPU i stands for a real
			// CPU whose siblings are its simulated siblings.
			spec := loadsAndRuns(t, r)
			tp, _ := machine.Build(spec)
			for a := range r.SimToReal {
				for b := range r.SimToReal {
					realSame := containsInt(r.Real[indexOf(r.Real, r.SimToReal[a])].Threads, r.SimToReal[b])
					if (tp.Core[a] == tp.Core[b]) != realSame {
						t.Errorf("simulated CPUs %d and %d: same core %v, real CPUs %d and %d: %v", a, b, tp.Core[a] == tp.Core[b], r.SimToReal[a], r.SimToReal[b], realSame)
					}
				}
			}
		})
	}
}

func indexOf(cpus []CPU, id int) int {
	for i, c := range cpus {
		if c.ID == id {
			return i
		}
	}
	return -1
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"0-3,8-11": "0-3,8-11", "0,16": "0,16", "": "", "3,1,2": "1-3", " 0-1\n": "0-1"} {
		l, err := parseCPUList(in)
		if err != nil || formatCPUList(l) != want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %s", in, l, err, want)
		}
	}
	for _, bad := range []string{"a", "3-1", "0-", "-1", "99999999"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) accepted", bad)
		}
	}
	for in, want := range map[string]int64{"32K": 32, "16M": 16384, "1024K": 1024, "65536": 64} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestOpenForms(t *testing.T) {
	// A directory laid out like /sys (no proc): the kernel and model are
	// reported missing.
	dir := t.TempDir()
	fsys, err := Open(filepath.Join("testdata", "vm-2vcpu.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rest, ok := strings.CutPrefix(p, "sys/")
		if !ok {
			return nil
		}
		data, _ := fs.ReadFile(fsys, p)
		dst := filepath.Join(dir, filepath.FromSlash(rest))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sysOnly, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Detect(sysOnly, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if r.Found.Cores != 2 || !hasNote(r.Fallbacks, "kernel version unknown") || !hasNote(r.Fallbacks, "no CPU model name") {
		t.Errorf("a /sys-only tree: found %+v, fallbacks %q", r.Found, r.Fallbacks)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("an empty directory was accepted as a sysfs tree")
	}
	if _, err := ParseArchive([]byte("no headers")); err == nil {
		t.Error("an archive without files was accepted")
	}
	if _, err := ParseArchive([]byte("-- ../etc/passwd --\nx\n")); err == nil {
		t.Error("an archive path with .. was accepted")
	}
}

// TestThisMachine detects the machine the tests run on (its /sys and
// /proc) and checks the preset loads and runs. It skips where there is
// no sysfs.
func TestThisMachine(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu here")
	}
	fsys, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Detect(fsys, Options{Name: "this-box"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("found %+v", r.Found)
	for _, fb := range r.Fallbacks {
		t.Logf("fallback: %s", fb)
	}
	if r.Spec.NumCPUs() != len(r.Found.CPUs) {
		t.Errorf("the preset has %d CPUs, the machine %d online", r.Spec.NumCPUs(), len(r.Found.CPUs))
	}
	loadsAndRuns(t, r)
}

// Every desc the cpuidle drivers write names its entry method; an unknown
// one is reported, not guessed.
func TestEntryFromDesc(t *testing.T) {
	for desc, want := range map[string]string{
		"CPUIDLE CORE POLL IDLE":   machine.EntryPoll,
		"MWAIT 0x20":               machine.EntryMWAIT,
		"ACPI FFH MWAIT 0x0":       machine.EntryMWAIT,
		"ACPI FFH INTEL MWAIT 0x1": machine.EntryMWAIT,
		"ACPI IOPORT 0x414":        machine.EntryIOPort,
		"ACPI HLT":                 machine.EntryHLT,
		"stop0_lite":               machine.EntryStop,
		"":                         "",
		"WFI":                      "",
	} {
		got, known := entryFromDesc(desc)
		if got != want || known != (want != "") {
			t.Errorf("entryFromDesc(%q) = %q, %v; want %q", desc, got, known, want)
		}
	}
}
