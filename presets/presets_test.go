package presets

import (
	"errors"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	json "github.com/goccy/go-json"

	"schedplay/engine/cpumask"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// The eight machines of spec/machines.md.
var wantNames = []string{
	"amd-7950x-16c-32t",
	"amd-zen3-2s-128c-256t",
	"amd-zen4-2s-256c-512t",
	"intel-2s-44c-88t",
	"p4-ht-1c-2t",
	"p4-up-1c-1t",
	"power9-2s-44c-176t",
	"sparc-2s-16c-128t",
}

func TestEmbeddedPresetsParse(t *testing.T) {
	if err := CheckEmbedded(); err != nil {
		t.Fatalf("embedded presets: %v", err)
	}
	list := List()
	var got []string
	for _, in := range list {
		if in.Kind == KindExperiment {
			continue // experiments are checked in experiment_test.go
		}
		got = append(got, in.Name)
		if in.Kind != KindMachine {
			t.Errorf("%s: kind %q, want %q", in.Name, in.Kind, KindMachine)
		}
		if in.Title == "" {
			t.Errorf("%s: empty title", in.Name)
		}
	}
	if !reflect.DeepEqual(got, wantNames) {
		t.Fatalf("List() names = %v, want %v", got, wantNames)
	}
	if !sort.SliceIsSorted(list, func(i, j int) bool { return list[i].Name < list[j].Name }) {
		t.Errorf("List() not sorted: %v", got)
	}
	ms := Machines()
	if len(ms) != len(wantNames) {
		t.Fatalf("Machines() has %d specs, want %d", len(ms), len(wantNames))
	}
	for i, s := range ms {
		if s.Name != wantNames[i] {
			t.Errorf("Machines()[%d] = %s, want %s", i, s.Name, wantNames[i])
		}
	}
}

// Every file under machines/ is a preset named like the file.
func TestFileNamesMatchPresetNames(t *testing.T) {
	entries, err := fs.ReadDir(embedded, machineDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
		data, err := fs.ReadFile(embedded, machineDir+"/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseMachine(data, e.Name())
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if s.Name+".json" != e.Name() {
			t.Errorf("file %s holds preset %q", e.Name(), s.Name)
		}
	}
	if len(files) != len(wantNames) {
		t.Errorf("machines/ holds %d files %v, want the %d presets of machines.md", len(files), files, len(wantNames))
	}
}

// Presets document themselves: source, notes, a note per cost, and they set
// every cost knob so no machine silently inherits another machine's numbers.
func TestPresetDocumentation(t *testing.T) {
	seeds := map[string]string{
		"intel-2s-44c-88t":      "sis-scalability-2019",
		"sparc-2s-16c-128t":     "sis-scalability-2019",
		"power9-2s-44c-176t":    "sis-scalability-2019",
		"amd-zen3-2s-128c-256t": "shared-runqueue",
		"amd-zen4-2s-256c-512t": "shared-runqueue",
		"amd-7950x-16c-32t":     "shared-runqueue",
		"p4-ht-1c-2t":           "smt-nice-2004",
		"p4-up-1c-1t":           "smt-nice-2004",
	}
	for _, s := range Machines() {
		if !strings.Contains(s.Source, seeds[s.Name]) {
			t.Errorf("%s: source %q does not name the discussion %q", s.Name, s.Source, seeds[s.Name])
		}
		assumed := false
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "assumed") {
				assumed = true
			}
			if !hasSourcePrefix(n) {
				t.Errorf("%s: note %q should start with doc:, measured:, spec: or assumed:", s.Name, n)
			}
		}
		if !assumed {
			t.Errorf("%s: notes list no assumption", s.Name)
		}
		for _, k := range costKnobs() {
			if _, ok := s.Costs[k]; !ok {
				t.Errorf("%s: cost knob %s not set", s.Name, k)
			}
		}
		if s.Topology.Sockets > 1 && (s.NUMADistance == nil || !hasSourcePrefix(s.NUMADistanceNote)) {
			t.Errorf("%s: %d sockets but no numa_distance table with a doc:/assumed: note", s.Name, s.Topology.Sockets)
		}
		if s.ReclaimDistanceNote != "" && !hasSourcePrefix(s.ReclaimDistanceNote) {
			t.Errorf("%s: reclaim_distance_note = %q should start with doc:, measured:, spec: or assumed:", s.Name, s.ReclaimDistanceNote)
		}
		for k, n := range s.CostNotes {
			if !hasSourcePrefix(n) {
				t.Errorf("%s: cost_notes.%s = %q should start with doc:, measured:, spec: or assumed:", s.Name, k, n)
			}
		}
	}
}

// hasSourcePrefix reports whether a note says where its value comes from:
// the discussions (doc), a public measurement (measured), a vendor
// specification (spec), or our own reasoning (assumed).
func hasSourcePrefix(n string) bool {
	for _, p := range []string{"doc: ", "measured: ", "spec: ", "assumed: "} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

type domWant struct {
	level machine.Level
	span  int
}

// Topologies of machines.md, built by the engine.
func TestTopologies(t *testing.T) {
	cases := []struct {
		name        string
		ncpu        int
		ncores      int
		nllc        int
		llc0        []int    // the LLC span of CPU 0
		siblings    [][2]int // pairs that share a core
		notSiblings [][2]int
		domains     []domWant // CPU 0's hierarchy, bottom-up
		llcIdx      int
	}{
		{name: "intel-2s-44c-88t", ncpu: 88, ncores: 44, nllc: 2,
			llc0:     append(seq(0, 21), seq(44, 65)...),
			siblings: [][2]int{{0, 44}, {21, 65}, {22, 66}, {43, 87}}, notSiblings: [][2]int{{0, 1}, {0, 22}},
			domains: []domWant{{machine.LevelSMT, 2}, {machine.LevelMC, 44}, {machine.LevelNUMA, 88}}, llcIdx: 1},
		{name: "sparc-2s-16c-128t", ncpu: 128, ncores: 16, nllc: 2,
			llc0:     seq(0, 63),
			siblings: [][2]int{{0, 7}, {0, 3}, {8, 15}, {120, 127}}, notSiblings: [][2]int{{7, 8}, {0, 64}},
			domains: []domWant{{machine.LevelSMT, 8}, {machine.LevelMC, 64}, {machine.LevelNUMA, 128}}, llcIdx: 1},
		{name: "power9-2s-44c-176t", ncpu: 176, ncores: 44, nllc: 22,
			llc0:     seq(0, 7),
			siblings: [][2]int{{0, 1}, {0, 3}, {4, 7}, {172, 175}}, notSiblings: [][2]int{{3, 4}, {0, 88}},
			domains: []domWant{{machine.LevelSMT, 4}, {machine.LevelMC, 8}, {machine.LevelDIE, 88}, {machine.LevelNUMA, 176}}, llcIdx: 1},
		{name: "amd-zen3-2s-128c-256t", ncpu: 256, ncores: 128, nllc: 16,
			llc0:     append(seq(0, 7), seq(128, 135)...),
			siblings: [][2]int{{0, 128}, {63, 191}, {64, 192}, {127, 255}}, notSiblings: [][2]int{{0, 1}, {0, 64}},
			domains: []domWant{{machine.LevelSMT, 2}, {machine.LevelMC, 16}, {machine.LevelDIE, 128}, {machine.LevelNUMA, 256}}, llcIdx: 1},
		{name: "amd-zen4-2s-256c-512t", ncpu: 512, ncores: 256, nllc: 32,
			llc0:     append(seq(0, 7), seq(256, 263)...),
			siblings: [][2]int{{0, 256}, {127, 383}, {128, 384}, {255, 511}}, notSiblings: [][2]int{{0, 1}, {0, 128}},
			domains: []domWant{{machine.LevelSMT, 2}, {machine.LevelMC, 16}, {machine.LevelDIE, 256}, {machine.LevelNUMA, 512}}, llcIdx: 1},
		{name: "amd-7950x-16c-32t", ncpu: 32, ncores: 16, nllc: 2,
			llc0:     append(seq(0, 7), seq(16, 23)...),
			siblings: [][2]int{{0, 16}, {15, 31}}, notSiblings: [][2]int{{0, 1}, {0, 8}},
			domains: []domWant{{machine.LevelSMT, 2}, {machine.LevelMC, 16}, {machine.LevelDIE, 32}}, llcIdx: 1},
		{name: "p4-ht-1c-2t", ncpu: 2, ncores: 1, nllc: 1,
			llc0:     []int{0, 1},
			siblings: [][2]int{{0, 1}},
			domains:  []domWant{{machine.LevelSMT, 2}}, llcIdx: 0},
		{name: "p4-up-1c-1t", ncpu: 1, ncores: 1, nllc: 1,
			llc0: []int{0}, domains: nil, llcIdx: -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Machine(c.name)
			if err != nil {
				t.Fatal(err)
			}
			tp, err := machine.Build(s)
			if err != nil {
				t.Fatal(err)
			}
			if tp.NCPU != c.ncpu || tp.NCores != c.ncores || tp.NLLC != c.nllc {
				t.Fatalf("NCPU/NCores/NLLC = %d/%d/%d, want %d/%d/%d", tp.NCPU, tp.NCores, tp.NLLC, c.ncpu, c.ncores, c.nllc)
			}
			if want := cpumask.Of(tp.NCPU, c.llc0...); !tp.LLCOf(0).Equal(want) {
				t.Errorf("LLC of CPU 0 = %v, want %v", tp.LLCOf(0), want)
			}
			for _, p := range c.siblings {
				if tp.Core[p[0]] != tp.Core[p[1]] {
					t.Errorf("CPUs %d and %d should be SMT siblings", p[0], p[1])
				}
			}
			for _, p := range c.notSiblings {
				if tp.Core[p[0]] == tp.Core[p[1]] {
					t.Errorf("CPUs %d and %d should not be SMT siblings", p[0], p[1])
				}
			}
			// Every CPU sees the same hierarchy shape, and every level's
			// groups partition its span.
			for cpu := 0; cpu < tp.NCPU; cpu++ {
				doms := tp.Domains[cpu]
				if len(doms) != len(c.domains) {
					t.Fatalf("CPU %d has %d domains %s, want %v", cpu, len(doms), levels(doms), c.domains)
				}
				for i, d := range doms {
					if d.Level != c.domains[i].level || d.Span.Weight() != c.domains[i].span || !d.Span.Test(cpu) {
						t.Fatalf("CPU %d domain %d = %v span %d, want %v span %d", cpu, i, d.Level, d.Span.Weight(), c.domains[i].level, c.domains[i].span)
					}
					checkGroups(t, cpu, d)
				}
				if tp.LLCDomainIdx[cpu] != c.llcIdx {
					t.Fatalf("CPU %d: LLCDomainIdx %d, want %d", cpu, tp.LLCDomainIdx[cpu], c.llcIdx)
				}
				if c.llcIdx >= 0 && !doms[c.llcIdx].Span.Equal(tp.LLCOf(cpu)) {
					t.Fatalf("CPU %d: sd_llc span %v != LLC %v", cpu, doms[c.llcIdx].Span, tp.LLCOf(cpu))
				}
				if got, want := tp.LLCSize(cpu), len(c.llc0); got != want {
					t.Fatalf("CPU %d: LLCSize %d, want %d", cpu, got, want)
				}
			}
		})
	}
}

// Zen4c groups two CCX per CCD; the CCD is only a name, not a domain.
func TestCCDGrouping(t *testing.T) {
	for _, c := range []struct {
		name       string
		sameCCD    [2]int
		otherCCD   [2]int
		ccdsPerSkt int
	}{
		{"amd-zen4-2s-256c-512t", [2]int{0, 8}, [2]int{0, 16}, 8},
		{"amd-zen3-2s-128c-256t", [2]int{0, 7}, [2]int{0, 8}, 8},
		{"amd-7950x-16c-32t", [2]int{0, 7}, [2]int{0, 8}, 2},
	} {
		s, _ := Machine(c.name)
		tp, err := machine.Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if tp.CCD[c.sameCCD[0]] != tp.CCD[c.sameCCD[1]] {
			t.Errorf("%s: CPUs %v should share a CCD", c.name, c.sameCCD)
		}
		if tp.CCD[c.otherCCD[0]] == tp.CCD[c.otherCCD[1]] {
			t.Errorf("%s: CPUs %v should be on different CCDs", c.name, c.otherCCD)
		}
		ccds := map[int]bool{}
		for cpu := 0; cpu < tp.NCPU; cpu++ {
			if tp.Socket[cpu] == 0 {
				ccds[tp.CCD[cpu]] = true
			}
		}
		if len(ccds) != c.ccdsPerSkt {
			t.Errorf("%s: %d CCDs on socket 0, want %d", c.name, len(ccds), c.ccdsPerSkt)
		}
	}
}

func TestDistances(t *testing.T) {
	s, _ := Machine("intel-2s-44c-88t")
	tp, err := machine.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b int
		want machine.Distance
	}{{0, 0, machine.SameCPU}, {0, 44, machine.SameCore}, {0, 21, machine.SameLLC}, {0, 65, machine.SameLLC}, {0, 22, machine.CrossSocket}} {
		if got := tp.Distance(c.a, c.b); got != c.want {
			t.Errorf("intel Distance(%d,%d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	s, _ = Machine("amd-zen3-2s-128c-256t")
	if tp, err = machine.Build(s); err != nil {
		t.Fatal(err)
	}
	if got := tp.Distance(0, 8); got != machine.SameSocket {
		t.Errorf("zen3 Distance(0,8) = %v, want cross_llc", got)
	}
}

func TestSMTAndIdleStates(t *testing.T) {
	coreLevel := map[string][]string{
		"intel-2s-44c-88t":      {"C3", "C6"},
		"sparc-2s-16c-128t":     nil,
		"power9-2s-44c-176t":    {"stop0", "stop1", "stop2", "stop4", "stop5"},
		"amd-zen3-2s-128c-256t": {"C2"},
		"amd-zen4-2s-256c-512t": {"C2"},
		"amd-7950x-16c-32t":     {"C2", "C3"},
		"p4-ht-1c-2t":           nil,
		"p4-up-1c-1t":           nil,
	}
	for _, s := range Machines() {
		var got []string
		for _, st := range s.IdleStates {
			if st.CoreLevel {
				got = append(got, st.Name)
			}
		}
		if !reflect.DeepEqual(got, coreLevel[s.Name]) {
			t.Errorf("%s: core-level states %v, want %v", s.Name, got, coreLevel[s.Name])
		}
		if s.IdleStates[0].CoreLevel {
			t.Errorf("%s: the shallowest state %s must not be core-level (it is what a CPU pays while a sibling runs)", s.Name, s.IdleStates[0].Name)
		}
	}
	p4, _ := Machine("p4-ht-1c-2t")
	if !reflect.DeepEqual(p4.SMTThroughput, []float64{1.0, 1.15}) {
		t.Errorf("p4-ht smt_throughput = %v, want [1 1.15] (per_cpu_gain 15%%, smt-nice-2004)", p4.SMTThroughput)
	}
	up, _ := Machine("p4-up-1c-1t")
	if !reflect.DeepEqual(up.SMTThroughput, []float64{1.0}) {
		t.Errorf("p4-up smt_throughput = %v, want [1]", up.SMTThroughput)
	}
}

func TestMachineReturnsFreshCopy(t *testing.T) {
	a, err := Machine("intel-2s-44c-88t")
	if err != nil {
		t.Fatal(err)
	}
	a.Topology.Sockets = 7
	a.Costs["probe_ns"] = 12345
	a.CostNotes["probe_ns"] = "changed"
	a.IdleStates[0].ExitLatencyUS = 999
	a.SMTThroughput[1] = 2
	a.Notes[0] = "changed"
	b, _ := Machine("intel-2s-44c-88t")
	if b.Topology.Sockets != 2 || b.Costs["probe_ns"] == 12345 || b.CostNotes["probe_ns"] == "changed" ||
		b.IdleStates[0].ExitLatencyUS == 999 || b.SMTThroughput[1] == 2 || b.Notes[0] == "changed" {
		t.Errorf("Machine returned shared state: %+v", b)
	}
	c := Machines()[0]
	c.Costs["probe_ns"] = 1
	if d := Machines()[0]; d.Costs["probe_ns"] == 1 {
		t.Errorf("Machines returned shared state")
	}
}

func TestMachineUnknownName(t *testing.T) {
	_, err := Machine("intel-1s")
	if err == nil {
		t.Fatal("no error for an unknown preset")
	}
	for _, want := range append([]string{`"intel-1s"`}, wantNames...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// A preset written out with json.Marshal (as a share link carries a custom
// machine) parses back to the same spec.
func TestRoundTrip(t *testing.T) {
	for _, s := range Machines() {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseMachine(data, PasteSource)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: round trip changed the spec:\n got %+v\nwant %+v", s.Name, back, s)
		}
	}
	// nil slices and maps marshal as null and are accepted.
	s, _ := Machine("p4-up-1c-1t")
	s.Notes, s.Costs, s.CostNotes = nil, nil, nil
	data, _ := json.Marshal(s)
	if _, err := ParseMachine(data, PasteSource); err != nil {
		t.Errorf("nulls rejected: %v", err)
	}
}

func TestBOMAccepted(t *testing.T) {
	if _, err := ParseMachine(append([]byte("\xef\xbb\xbf"), intelJSON(t)...), "bom.json"); err != nil {
		t.Errorf("UTF-8 BOM rejected: %v", err)
	}
}

func intelJSON(t testing.TB) []byte {
	t.Helper()
	data, err := fs.ReadFile(embedded, machineDir+"/intel-2s-44c-88t.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mutated returns the Intel preset with f applied to its generic form.
func mutated(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(intelJSON(t), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		f    func(m map[string]any)
		want []string // substrings of the error, after "bad.json: "
	}{
		{"unknown top-level field", func(m map[string]any) { m["colour"] = "red" },
			[]string{"field colour: bad value (unknown field)", "allowed: the fields of the preset: name, kind, title"}},
		{"unknown nested field", func(m map[string]any) { obj(m, "topology")["sokets"] = 2 },
			[]string{"field topology.sokets", "allowed: the fields of topology: sockets, cores_per_socket"}},
		{"field name in wrong case", func(m map[string]any) { m["Name"] = m["name"]; delete(m, "name") },
			[]string{"field Name", `did you mean "name"`, "allowed: the fields of the preset"}},
		{"wrong numbering", func(m map[string]any) { obj(m, "topology")["numbering"] = "zigzag" },
			[]string{`field topology.numbering: bad value "zigzag" (allowed: "interleaved" or "contiguous")`}},
		{"cores_per_llc not a divisor", func(m map[string]any) { obj(m, "topology")["cores_per_llc"] = 5 },
			[]string{"field topology.cores_per_llc: bad value 5 (allowed: a divisor of cores_per_socket (22))"}},
		{"llcs_per_ccd not a divisor", func(m map[string]any) {
			obj(m, "topology")["cores_per_llc"] = 2
			obj(m, "topology")["llcs_per_ccd"] = 3
		}, []string{"field topology.llcs_per_ccd: bad value 3", "divisor of the LLCs per socket (11)"}},
		{"smt_throughput wrong length", func(m map[string]any) { m["smt_throughput"] = []any{1.0, 1.1, 1.2} },
			[]string{"field smt_throughput: bad value 3 entries (allowed: exactly threads_per_core (2) entries"}},
		{"smt_throughput first entry", func(m map[string]any) { m["smt_throughput"] = []any{1.1, 1.2} },
			[]string{"field smt_throughput[0]: bad value 1.1 (allowed: 1.0"}},
		{"threads_per_core too many", func(m map[string]any) { obj(m, "topology")["threads_per_core"] = 16 },
			[]string{"field topology.threads_per_core: bad value 16 (allowed: 1..8)"}},
		{"unknown cost knob", func(m map[string]any) {
			obj(m, "costs")["foo_ns"] = 5
			obj(m, "cost_notes")["foo_ns"] = "assumed: x"
		}, []string{"field costs.foo_ns", `unknown knob "foo_ns"`, "allowed: one of the cost knobs probe_ns, wake_ns"}},
		{"non-cost knob in costs", func(m map[string]any) {
			obj(m, "costs")["SIS_PROP"] = 1
			obj(m, "cost_notes")["SIS_PROP"] = "assumed: x"
		}, []string{"field costs.SIS_PROP", "feature knob, not a cost", "allowed: one of the cost knobs probe_ns"}},
		{"cost knob in wrong case", func(m map[string]any) {
			obj(m, "costs")["PROBE_NS"] = obj(m, "costs")["probe_ns"]
			obj(m, "cost_notes")["PROBE_NS"] = "assumed: x"
		}, []string{"field costs.PROBE_NS", `allowed: the exact name "probe_ns"`}},
		{"cost below range", func(m map[string]any) { obj(m, "costs")["probe_ns"] = -5 },
			[]string{"field costs.probe_ns: bad value -5 (allowed: 0..100000 ns)"}},
		{"cost above range", func(m map[string]any) { obj(m, "costs")["wake_ns"] = 2000000000 },
			[]string{"field costs.wake_ns: bad value 2000000000 (allowed: 0..1000000 ns)"}},
		{"cost not an integer", func(m map[string]any) { obj(m, "costs")["probe_ns"] = 1.5 },
			[]string{"field costs.probe_ns: bad value 1.5 (allowed: a whole number"}},
		{"missing cost note", func(m map[string]any) { delete(obj(m, "cost_notes"), "probe_ns") },
			[]string{"field cost_notes.probe_ns: bad value (missing) (allowed: a one-line note"}},
		{"empty cost note", func(m map[string]any) { obj(m, "cost_notes")["probe_ns"] = " " },
			[]string{"field cost_notes.probe_ns", "allowed: a non-empty single line"}},
		{"multi-line cost note", func(m map[string]any) { obj(m, "cost_notes")["probe_ns"] = "a\nb" },
			[]string{"field cost_notes.probe_ns", "single line"}},
		{"cost note without cost", func(m map[string]any) { obj(m, "cost_notes")["extra_ns"] = "assumed: x" },
			[]string{"field cost_notes.extra_ns", "allowed: a key of costs: ctx_switch_ns"}},
		{"1,000,000 cores per socket", func(m map[string]any) { obj(m, "topology")["cores_per_socket"] = 1000000 },
			[]string{"field topology.cores_per_socket: bad value 1000000 (allowed: 1..2048)"}},
		{"1,048,576 CPUs in total", func(m map[string]any) {
			tp := obj(m, "topology")
			tp["sockets"], tp["cores_per_socket"], tp["threads_per_core"], tp["cores_per_llc"] = 64, 2048, 8, 2048
		}, []string{"field topology: bad value 1048576 CPUs (allowed: at most 2048 CPUs"}},
		{"huge number", func(m map[string]any) { obj(m, "topology")["sockets"] = json.Number("1e400") },
			[]string{"field topology.sockets: bad value 1e400 (allowed: a whole number"}},
		{"wrong kind", func(m map[string]any) { m["kind"] = "experiment" },
			[]string{`field kind: bad value "experiment" (allowed: "machine")`}},
		{"missing kind", func(m map[string]any) { delete(m, "kind") },
			[]string{`field kind: bad value "" (allowed: "machine")`}},
		{"string for an integer", func(m map[string]any) { obj(m, "topology")["sockets"] = "two" },
			[]string{`field topology.sockets: bad value "two" (allowed: a whole number`}},
		{"fractional cores", func(m map[string]any) { obj(m, "topology")["cores_per_socket"] = 22.5 },
			[]string{"field topology.cores_per_socket: bad value 22.5 (allowed: a whole number"}},
		{"idle states out of order", func(m map[string]any) {
			st := m["idle_states"].([]any)
			st[0], st[3] = st[3], st[0]
		}, []string{"field idle_states[1]", "allowed: states ordered shallowest first"}},
		{"no idle states", func(m map[string]any) { m["idle_states"] = []any{} },
			[]string{"field idle_states: bad value 0 entries (allowed: 1..8 states"}},
		{"idle state without name", func(m map[string]any) { m["idle_states"].([]any)[0].(map[string]any)["name"] = "" },
			[]string{`field idle_states[0].name: bad value ""`, "allowed: a non-empty state name"}},
		{"idle state unknown field", func(m map[string]any) { m["idle_states"].([]any)[2].(map[string]any)["exit_us"] = 3 },
			[]string{"field idle_states[2].exit_us", "allowed: the fields of idle_states[2]: name, exit_latency_us"}},
		{"unknown idle-state entry", func(m map[string]any) { m["idle_states"].([]any)[1].(map[string]any)["entry"] = "monitor" },
			[]string{`field idle_states[1].entry: bad value "monitor" (allowed: poll, mwait, hlt, io, stop, yield or "" (interrupt-driven, as hlt))`}},
		{"poll entry on a non-polling state", func(m map[string]any) { m["idle_states"].([]any)[1].(map[string]any)["entry"] = "poll" },
			[]string{`field idle_states[1].entry: bad value "poll" (allowed: "poll" exactly for the polling state`}},
		{"polling state entered by mwait", func(m map[string]any) { m["idle_states"].([]any)[0].(map[string]any)["entry"] = "mwait" },
			[]string{`field idle_states[0].entry: bad value "mwait" (allowed: "poll" exactly for the polling state`}},
		{"name with spaces", func(m map[string]any) { m["name"] = "my box" },
			[]string{`field name: bad value "my box" (allowed: 1..64 characters`}},
		{"empty name", func(m map[string]any) { m["name"] = "" },
			[]string{`field name: bad value ""`}},
		{"costs as an array", func(m map[string]any) { m["costs"] = []any{1, 2} },
			[]string{"field costs: bad value an array (allowed: an object whose values are a whole number"}},
		{"notes as a string", func(m map[string]any) { m["notes"] = "one note" },
			[]string{`field notes: bad value "one note" (allowed: an array of a string)`}},
		{"topology null", func(m map[string]any) { m["topology"] = nil },
			[]string{"field topology: bad value null (allowed: an object with the fields sockets"}},
		{"odd key", func(m map[string]any) { m["a b"] = 1 },
			[]string{`field ["a b"]: bad value (unknown field)`}},
		{"numa_distance with a row too few", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 21}} },
			[]string{"field numa_distance: bad value 1 rows (allowed: a 2×2 table, one row per socket (or no table: 20 between sockets))"}},
		{"numa_distance row too short", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 21}, []any{21}} },
			[]string{"field numa_distance[1]: bad value 1 entries (allowed: 2 entries, one per socket)"}},
		{"numa_distance diagonal not local", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 21}, []any{21, 11}} },
			[]string{"field numa_distance[1][1]: bad value 11 (allowed: 10 (LOCAL_DISTANCE) on the diagonal)"}},
		{"numa_distance remote as near as local", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 10}, []any{10, 10}} },
			[]string{"field numa_distance[0][1]: bad value 10 (allowed: 11..255 between two nodes"}},
		{"numa_distance above a SLIT byte", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 256}, []any{256, 10}} },
			[]string{"field numa_distance[0][1]: bad value 256 (allowed: 11..255 between two nodes"}},
		{"numa_distance not symmetric", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 21}, []any{32, 10}} },
			[]string{"field numa_distance[0][1]: bad value 21 (allowed: a symmetric table: numa_distance[1][0] is 32)"}},
		{"numa_distance not whole numbers", func(m map[string]any) { m["numa_distance"] = []any{[]any{10, 21.5}, []any{21.5, 10}} },
			[]string{"field numa_distance[0][1]: bad value 21.5 (allowed: a whole number"}},
		{"numa_distance without a note", func(m map[string]any) { delete(m, "numa_distance_note") },
			[]string{"field numa_distance_note: bad value (missing) (allowed: a one-line note saying where numa_distance comes from"}},
		{"numa_distance_note without a table", func(m map[string]any) { delete(m, "numa_distance") },
			[]string{"field numa_distance_note", "(no numa_distance given)", "allowed: a note only beside numa_distance"}},
		{"reclaim_distance below local", func(m map[string]any) {
			m["reclaim_distance"] = 5
			m["reclaim_distance_note"] = "assumed: x"
		}, []string{"field reclaim_distance: bad value 5 (allowed: 0 (the generic RECLAIM_DISTANCE, 30) or 10..255)"}},
		{"node_reclaim_distance above a SLIT byte", func(m map[string]any) {
			m["node_reclaim_distance"] = 300
			m["reclaim_distance_note"] = "assumed: x"
		}, []string{"field node_reclaim_distance: bad value 300 (allowed: 0 (RECLAIM_DISTANCE) or 10..255)"}},
		{"node_reclaim_distance without a note", func(m map[string]any) { m["node_reclaim_distance"] = 32 },
			[]string{"field reclaim_distance_note: bad value (missing)", "where reclaim_distance or node_reclaim_distance comes from"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErr(t, mutated(t, c.f), "bad.json", c.want)
		})
	}
}

func TestParseErrorsRaw(t *testing.T) {
	intel := string(intelJSON(t))
	deep := `{"notes":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"
	cases := []struct {
		name, input, source string
		want                []string
	}{
		{"garbage", "garbage", "", []string{"field (document)", `bad value "garbage" (not valid JSON`, "allowed: one JSON object"}},
		{"binary garbage", "\x00\xff\xfe", "", []string{"field (document)", "not valid JSON", "allowed: one JSON object"}},
		{"top-level array", "[1,2]", "", []string{"field (document): bad value an array (allowed: an object with the fields name, kind"}},
		{"top-level number", "42", "", []string{"field (document): bad value 42 (allowed: an object"}},
		{"empty", "", "", []string{"field (document): bad value empty input (allowed: one JSON object"}},
		{"white space only", " \n\t", "", []string{"field (document): bad value empty input"}},
		{"trailing garbage", intel + "\n}", "", []string{"field (document): bad value trailing data \"}\" at byte", "allowed: one JSON object and nothing after it"}},
		{"two documents", intel + intel, "", []string{"trailing data", "allowed: one JSON object and nothing after it"}},
		{"truncated", intel[:len(intel)/2], "", []string{"not valid JSON: unexpected end of input", "allowed: one JSON object"}},
		{"syntax error inside", strings.Replace(intel, `"sockets": 2,`, `"sockets": 2,,`, 1), "",
			[]string{"field topology", "not valid JSON", "near byte"}},
		{"duplicate key", strings.Replace(intel, `"sockets": 2,`, `"sockets": 2, "sockets": 3,`, 1), "x.json",
			[]string{"field topology.sockets: bad value (given twice) (allowed: each key once per object)"}},
		{"deep nesting", deep, "", []string{"nesting deeper than 32 levels"}},
		{"too large", strings.Repeat(" ", MaxInputBytes+1), "big.json",
			[]string{"field (document): bad value 1048577 bytes (allowed: at most 1048576 bytes)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.source
			if src == "" {
				src = PasteSource
			}
			checkErr(t, []byte(c.input), src, c.want)
		})
	}
}

// checkErr parses data and checks the error names the source, a field, and
// contains every wanted piece.
func checkErr(t *testing.T, data []byte, source string, want []string) {
	t.Helper()
	s, err := ParseMachine(data, source)
	if err == nil {
		t.Fatalf("no error; parsed %+v", s)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, source+": field ") {
		t.Errorf("error %q does not start with %q", msg, source+": field ")
	}
	if !strings.Contains(msg, "(allowed: ") {
		t.Errorf("error %q does not say what is allowed", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q\n  does not contain %q", msg, w)
		}
	}
	var fe *machine.FieldError
	if !errors.As(err, &fe) {
		t.Errorf("error %q does not wrap *machine.FieldError", msg)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Source != source {
		t.Errorf("error %q is not a *presets.Error from %q", msg, source)
	}
}

func TestParseEmptySourceIsPaste(t *testing.T) {
	_, err := ParseMachine([]byte("x"), "")
	if err == nil || !strings.HasPrefix(err.Error(), PasteSource+": ") {
		t.Errorf("error %v should name %s", err, PasteSource)
	}
}

// A broken or misnamed embedded file is reported by name, and the good
// presets still load.
func TestLoaderReportsBrokenPresets(t *testing.T) {
	misnamed := strings.Replace(string(intelJSON(t)), `"name": "intel-2s-44c-88t"`, `"name": "other"`, 1)
	fsys := fstest.MapFS{
		"machines/intel-2s-44c-88t.json": {Data: intelJSON(t)},
		"machines/broken.json":           {Data: []byte(`{"name": "broken",`)},
		"machines/renamed.json":          {Data: []byte(misnamed)},
		"machines/README.txt":            {Data: []byte("not a preset")},
	}
	r := loadFS(fsys)
	if r.err == nil {
		t.Fatal("loader accepted broken presets")
	}
	for _, want := range []string{"broken.json: field", "renamed.json: field name: bad value \"other\" (allowed: \"renamed\""} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("loader error %q does not contain %q", r.err, want)
		}
	}
	if !reflect.DeepEqual(r.machineNames, []string{"intel-2s-44c-88t"}) {
		t.Errorf("loaded %v, want only the good preset", r.machineNames)
	}
	if r.broken["broken"] == nil || r.broken["renamed"] == nil {
		t.Errorf("broken presets not recorded by name: %v", r.broken)
	}
}

func FuzzParseMachine(f *testing.F) {
	entries, _ := fs.ReadDir(embedded, machineDir)
	for _, e := range entries {
		data, _ := fs.ReadFile(embedded, machineDir+"/"+e.Name())
		f.Add(data)
	}
	f.Add([]byte("garbage"))
	f.Add([]byte(`{"topology":{"sockets":1e9}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseMachine(data, "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error %q does not name the source", err)
			}
			return
		}
		if _, err := machine.Build(s); err != nil {
			t.Fatalf("parsed spec does not build: %v", err)
		}
		for k, v := range s.Costs {
			id, ok := knob.Lookup(k)
			if !ok || knob.ByID(id).Group != knob.Cost || v < knob.ByID(id).Min || v > knob.ByID(id).Max {
				t.Fatalf("accepted bad cost %s=%d", k, v)
			}
		}
	})
}

// checkGroups verifies the groups of d are disjoint, inside its span and
// cover it.
func checkGroups(t *testing.T, cpu int, d *machine.Domain) {
	t.Helper()
	union := cpumask.New(d.Span.Len())
	for _, g := range d.Groups {
		if union.Intersects(g) {
			t.Fatalf("CPU %d %v: groups overlap", cpu, d.Level)
		}
		if !g.SubsetOf(d.Span) {
			t.Fatalf("CPU %d %v: group %v outside span %v", cpu, d.Level, g, d.Span)
		}
		union.Or(g)
	}
	if !union.Equal(d.Span) {
		t.Fatalf("CPU %d %v: groups cover %v, span %v", cpu, d.Level, union, d.Span)
	}
	if len(d.Groups) < 2 {
		t.Fatalf("CPU %d %v: %d group(s), a kept level has at least two", cpu, d.Level, len(d.Groups))
	}
}

func levels(doms []*machine.Domain) string {
	var out []string
	for _, d := range doms {
		out = append(out, d.Level.String())
	}
	return "[" + strings.Join(out, " ") + "]"
}

func seq(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}
