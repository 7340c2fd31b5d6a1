package playground

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/presets"
	"schedplay/scenario"
)

func TestLinkRoundTrip(t *testing.T) {
	st := Default()
	st.Preset = "amd-zen3-2s-128c-256t"
	st.Workloads = []string{"schbench:m=4,t=16", "hog:n=8,nice=19,cpus=0-3,128-131"}
	st.Knobs["SIS_CORE"] = "false"
	st.AB = true
	st.KnobsB["SIS_CORE"] = "false"
	st.KnobsB["SIS_PROP"] = "false"
	st.Seed = 7
	st.Speed = 0.01
	frag := st.Encode()
	if !strings.HasPrefix(frag, "v=1&") {
		t.Fatalf("link does not start with v=1: %s", frag)
	}
	back, err := Parse("#" + frag)
	if err != nil {
		t.Fatalf("%s: %v", frag, err)
	}
	if back.Encode() != frag {
		t.Fatalf("round trip changed the link:\n%s\n%s", frag, back.Encode())
	}
	if Base().Encode() != "v=1" {
		t.Fatalf("the base state writes %q, want only v=1", Base().Encode())
	}
	def, err := Parse("#" + Default().Encode())
	if err != nil || def.Encode() != Default().Encode() {
		t.Fatalf("the default link does not round-trip: %v %q", err, def.Encode())
	}
	if empty, err := Parse(""); err != nil || empty.Encode() != Default().Encode() {
		t.Fatalf("an empty link opens %q (%v), want the default", empty.Encode(), err)
	}
}

// The fresh page is the V1 story: one socket's schbench, A/B with only
// SIS_CORE differing, and select_idle_cpu reached.
func TestDefaultIsTheV1Story(t *testing.T) {
	st := Default()
	if !st.AB || st.KnobsB["SIS_CORE"] != "false" || st.Knobs["SIS_CORE"] != "" || st.Knobs["SIS_BOUND"] != "true" {
		t.Fatalf("default arms: A %v, B %v", st.Knobs, st.KnobsB)
	}
	for k, v := range st.Knobs {
		if k != "SIS_CORE" && st.KnobsB[k] != v {
			t.Errorf("arms differ in %s besides SIS_CORE", k)
		}
	}
	var p99 [2]int64
	for arm := 0; arm < 2; arm++ {
		cfg := st.Config(arm)
		cfg.Duration = 3 * engine.Second
		res, err := scenario.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Search.SelectIdleCPUCalls == 0 {
			t.Errorf("arm %d never calls select_idle_cpu", arm)
		}
		p99[arm] = res.Workloads[0].WakeupLatencyUS.P99
	}
	if p99[1] < 10*p99[0] {
		t.Errorf("after 3 s: p99 A %d µs, B %d µs: the tail does not show", p99[0], p99[1])
	}
}

// Switching the machine switches default workloads and keeps edited
// ones; every preset's default fits it.
func TestSwitchingMachineSizesTheWorkload(t *testing.T) {
	st := Default()
	st.SetMachine("p4-up-1c-1t", nil)
	if got, _ := PresetWorkloads("p4-up-1c-1t"); strings.Join(st.Workloads, " ") != strings.Join(got, " ") {
		t.Fatalf("on the P4: %v", st.Workloads)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	st.Workloads = []string{"hog:n=1"}
	st.SetMachine("amd-7950x-16c-32t", nil)
	if st.Workloads[0] != "hog:n=1" {
		t.Fatalf("an edited workload was replaced: %v", st.Workloads)
	}
	for _, spec := range presets.Machines() {
		name := spec.Name
		w, ok := PresetWorkloads(name)
		if !ok {
			t.Errorf("machine preset %s has no default workload", name)
			continue
		}
		for _, x := range w {
			if err := workload.Check(x, spec.NumCPUs()); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if st, err := Parse("#preset=p4-ht-1c-2t"); err != nil || !st.WorkloadsAreDefault() || st.Workloads[0] != "schbench:m=1,t=1" {
		t.Errorf("a link without w= on the P4: %v %v", st.Workloads, err)
	}
}

func TestContractExampleLinkParses(t *testing.T) {
	st, err := Parse("#preset=intel-2s-44c-88t&w=schbench:m=2,t=22&SIS_CORE=0&seed=7&speed=1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Knobs["SIS_CORE"] != "0" || st.Seed != 7 || st.Workloads[0] != "schbench:m=2,t=22" {
		t.Fatalf("parsed %+v", st)
	}
}

// A bad or hostile link gives an error naming the problem (the page shows
// it and keeps the defaults).
func TestHostileLinksAreRefusedWithAReason(t *testing.T) {
	big := base64.RawURLEncoding.EncodeToString([]byte(`{"name":"huge","kind":"machine","title":"t","source":"s","topology":{"sockets":1,"cores_per_socket":1000000,"threads_per_core":1,"cores_per_llc":1000000,"numbering":"interleaved"},"smt_throughput":[1],"idle_states":[{"name":"C1","exit_latency_us":1,"target_residency_us":1}]}`))
	cases := []struct{ frag, want string }{
		{"FOO=1", `"FOO"`},
		{"SIS_CORE=maybe", "SIS_CORE"},
		{"preset=no-such", "no-such"},
		{"w=bogus:x=1", "bogus"},
		{"w=schbench:m=0", "m"},
		{"seed=-3", "seed"},
		{"speed=fast", "speed"},
		{"v=9", "version"},
		{"machine=!!!not-base64", "machine"},
		{"machine=" + big, "2048"},
		{"exp=nope", "nope"},
		{"w=hog:cpus=0-9999", "cpus"},
		{strings.Repeat("x", MaxFragmentBytes+1), "at most"},
	}
	for _, c := range cases {
		st, err := Parse(c.frag)
		if err == nil {
			t.Errorf("%.60s: accepted", c.frag)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: error %q does not mention %q", c.frag, err, c.want)
		}
		if st.Encode() != Default().Encode() {
			t.Errorf("%.60s: did not fall back to defaults", c.frag)
		}
	}
}

func TestExperimentLinkOpensItsArms(t *testing.T) {
	st, err := Parse("exp=v1-sis-schbench-one-socket")
	if err != nil {
		t.Fatal(err)
	}
	if !st.AB || st.NumArms() != 4 || st.Knobs["SIS_BOUND"] != "" || st.KnobsB["SIS_BOUND"] != "true" ||
		st.Extra[0]["SIS_CORE"] != "false" || st.Extra[1]["SIS_PROP"] != "false" {
		t.Fatalf("experiment arms not opened as A-D: %+v", st)
	}
	link := st.Encode()
	if !strings.Contains(link, "exp=v1-sis-schbench-one-socket") || !strings.Contains(link, "arms=4") {
		t.Fatalf("link %s", link)
	}
	back, err := Parse(link)
	if err != nil || back.Encode() != link || back.Experiment != st.Experiment {
		t.Fatalf("round trip: %v %q", err, back.Encode())
	}
	// Changing an arm leaves the experiment: the link no longer names it.
	back.Knobs["SIS_CORE"] = "false"
	if strings.Contains(back.Encode(), "exp=") {
		t.Fatalf("a changed experiment still links as one: %s", back.Encode())
	}
	for _, e := range presets.Experiments() {
		st, err := Parse("exp=" + e.Name)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if n := st.NumArms(); n != len(LiveArms(e)) || n > MaxArms {
			t.Errorf("%s: %d arms, live %v", e.Name, n, LiveArms(e))
		}
		if !st.IsExperiment() {
			t.Errorf("%s: not recognised as itself", e.Name)
		}
	}
}

// The page's frame-by-frame advance reaches the same results as one run
// of the scenario to the same time: chunking does not change a run.
func TestAdvanceInFramesMatchesOneRun(t *testing.T) {
	a := New()
	st := Default()
	st.Preset = "amd-7950x-16c-32t"
	st.Workloads = []string{"schbench:m=2,t=8,c=2000,s=1000"}
	st.Speed = 0.05
	if err := a.Apply(st); err != nil {
		t.Fatal(err)
	}
	for a.Now() < 300*engine.Millisecond {
		a.Advance(16*time.Millisecond, time.Second)
	}
	a.RunTo(300 * engine.Millisecond)
	cfg := st.Config(0)
	cfg.Duration = 300 * engine.Millisecond
	want, err := scenario.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := a.Arms()[0].Sim.Workloads()[0].WakeupLatency
	wantLat := want.Workloads[0].WakeupLatencyUS
	got.Mean, wantLat.Mean = 0, 0 // the result rounds the mean
	if got != wantLat || a.Arms()[0].Sim.Events() != want.Events {
		t.Fatalf("frames: %+v (%d events); one run: %+v (%d events)", got, a.Arms()[0].Sim.Events(), want.Workloads[0].WakeupLatencyUS, want.Events)
	}
}

func TestStepWakeupStopsAtTheNextDecision(t *testing.T) {
	a := New()
	for i := 0; i < 5; i++ {
		before := a.Arms()[0].Sim.Totals().Wakeups
		a.StepWakeup()
		if got := a.Arms()[0].Sim.Totals().Wakeups; got != before+1 {
			t.Fatalf("step %d: wakeups %d -> %d", i, before, got)
		}
	}
}

// Links that crashed or hung the page (issue 9): an empty workload value
// is refused naming the key; speed=NaN and infinities are refused instead
// of leaving the page on "Loading" and being written back into the link.
func TestLinkRefusesEmptyAndNonFiniteValues(t *testing.T) {
	for frag, want := range map[string]string{
		"#w=uperf:size=":          "size",
		"#w=netperf:req=":         "req",
		"#speed=NaN":              "speed",
		"#speed=Inf":              "speed",
		"#speed=-Inf":             "speed",
		"#speed=":                 "speed",
		"#seed=":                  "seed",
		"#seed=-1":                "seed",
		"#probe_ns=":              "probe_ns",
		"#probe_ns=NaN":           "probe_ns",
		"#SIS_COR=0":              `did you mean "SIS_CORE"`,
		"#preset=intel-2s-44c-88": `did you mean "intel-2s-44c-88t"`,
	} {
		st, err := Parse(frag)
		if err == nil {
			t.Errorf("%s accepted", frag)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v does not mention %q", frag, err, want)
		}
		if st.Speed != Default().Speed || st.Encode() != Default().Encode() {
			t.Errorf("%s: fell back to %q, not the default", frag, st.Encode())
		}
	}
}

// Every knob has a source the panel can show.
func TestEveryKnobHasASource(t *testing.T) {
	for _, d := range knob.Table() {
		if KnobSource(&d) == "" {
			t.Errorf("knob %s: no source", d.Name)
		}
	}
}

// Era 6.12 opens from a link like every other era: era= for arm A,
// b.era= for arm B, each running its own era; a 6.12-only knob is taken
// in era 6.12 and refused by name, whatever its value, in an era that
// lacks it (the panel refuses it there too).
func TestEra612Links(t *testing.T) {
	run := func(st State, arm int) *scenario.Result {
		t.Helper()
		cfg := st.Config(arm)
		cfg.Duration = 20 * engine.Millisecond
		res, err := scenario.Run(cfg)
		if err != nil {
			t.Fatalf("arm %d of %s: %v", arm, st.Encode(), err)
		}
		return res
	}
	for _, c := range []struct {
		frag    string
		arms    int
		era     []string // per arm
		delayed []bool   // per arm: results carry delayed_dequeue
	}{
		{"era=6.12&w=hackbench:g=2,l=50", 1, []string{"6.12"}, []bool{true}},
		{"ab=1&b.era=6.12&w=hackbench:g=2,l=50", 2, []string{"5.2", "6.12"}, []bool{false, true}},
		{"era=6.6&ab=1&b.era=6.12&w=hackbench:g=2,l=50", 2, []string{"6.6", "6.12"}, []bool{false, true}},
		{"era=6.12&DELAY_DEQUEUE=0&ab=1&b.era=6.12&w=hackbench:g=2,l=50", 2, []string{"6.12", "6.12"}, []bool{true, true}},
	} {
		st, err := Parse(c.frag)
		if err != nil {
			t.Fatalf("%s: %v", c.frag, err)
		}
		if st.NumArms() != c.arms {
			t.Fatalf("%s: %d arms", c.frag, st.NumArms())
		}
		link := st.Encode()
		back, err := Parse(link)
		if err != nil || back.Encode() != link {
			t.Fatalf("%s: round trip of %s: %v %q", c.frag, link, err, back.Encode())
		}
		for arm := 0; arm < c.arms; arm++ {
			res := run(st, arm)
			if got := res.Knobs["era"]; got != c.era[arm] {
				t.Errorf("%s arm %d: ran era %v, want %s", c.frag, arm, got, c.era[arm])
			}
			if (res.Delayed != nil) != c.delayed[arm] {
				t.Errorf("%s arm %d: delayed_dequeue %+v, want present %v", c.frag, arm, res.Delayed, c.delayed[arm])
			}
			if res.Search.Wakeups == 0 {
				t.Errorf("%s arm %d: no wakeups", c.frag, arm)
			}
			// The page's own build of the arm (its worker's) runs the era too.
			a, err := BuildArm(st, arm, nil, func(time.Duration, bool) {}, nil, nil)
			if err != nil {
				t.Fatalf("%s arm %d: page build: %v", c.frag, arm, err)
			}
			a.Sim.RunUntil(5 * engine.Millisecond)
			if k := a.Sim.Knobs(); k.Era().String() != c.era[arm] || a.Sim.Totals().Wakeups == 0 {
				t.Errorf("%s arm %d: the page's arm runs era %s with %d wakeups", c.frag, arm, k.Era(), a.Sim.Totals().Wakeups)
			}
		}
	}
	// DELAY_DEQUEUE=0 is taken in 6.12, and it turns delayed dequeue off.
	on, err := Parse("era=6.12&w=hackbench:g=2,l=50")
	if err != nil {
		t.Fatal(err)
	}
	off, err := Parse("era=6.12&DELAY_DEQUEUE=0&w=hackbench:g=2,l=50")
	if err != nil {
		t.Fatal(err)
	}
	if off.Knobs["DELAY_DEQUEUE"] != "0" {
		t.Fatalf("DELAY_DEQUEUE not kept: %v", off.Knobs)
	}
	if d := run(on, 0).Delayed; d == nil || d.Delayed == 0 {
		t.Errorf("era 6.12 with DELAY_DEQUEUE on delayed nothing: %+v", d)
	}
	if d := run(off, 0).Delayed; d == nil || d.Delayed != 0 || d.Requeued != 0 {
		t.Errorf("era 6.12 with DELAY_DEQUEUE=0 still delayed: %+v", d)
	}
	// Refused by name where the era lacks it, even at the value it reads
	// as there, and with era= written after it as Encode sorts it.
	for frag, key := range map[string]string{
		"era=6.6&DELAY_DEQUEUE=0":                    `"DELAY_DEQUEUE"`,
		"DELAY_DEQUEUE=0&era=6.6":                    `"DELAY_DEQUEUE"`,
		"DELAY_DEQUEUE=1&era=6.6":                    `"DELAY_DEQUEUE"`,
		"DELAY_DEQUEUE=0":                            `"DELAY_DEQUEUE"`,
		"ab=1&b.era=6.6&b.DELAY_DEQUEUE=0":           `"b.DELAY_DEQUEUE"`,
		"era=6.12&ab=1&b.DELAY_DEQUEUE=0":            `"b.DELAY_DEQUEUE"`,
		"arms=3&b.era=6.12&c.era=6.6&c.PICK_BUDDY=0": `"c.PICK_BUDDY"`,
		"era=6.12&SIS_PROP=0":                        `"SIS_PROP"`,
	} {
		st, err := Parse(frag)
		if err == nil {
			t.Errorf("%s: accepted (%s)", frag, st.Encode())
			continue
		}
		if !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "does not exist in era") {
			t.Errorf("%s: error %q does not name %s and the era", frag, err, key)
		}
		if st.Encode() != Default().Encode() {
			t.Errorf("%s: did not fall back to the defaults", frag)
		}
	}
}

// The 6.6 → 6.12 experiment opens its three arms live, each in its own
// era, and its link round-trips (arm C's DELAY_DEQUEUE is checked against
// arm C's era, 6.12).
func TestEra612ExperimentOpensThreeArms(t *testing.T) {
	st, err := Parse("exp=era-6.6-vs-6.12")
	if err != nil {
		t.Fatal(err)
	}
	if st.NumArms() != 3 || st.Knobs["era"] != "6.6" || st.KnobsB["era"] != "6.12" || st.KnobsB["DELAY_DEQUEUE"] != "" ||
		st.Extra[0]["era"] != "6.12" || st.Extra[0]["DELAY_DEQUEUE"] != "false" || st.Preset != "intel-2s-44c-88t" {
		t.Fatalf("arms: %d, A %v, B %v, extra %v on %s", st.NumArms(), st.Knobs, st.KnobsB, st.Extra, st.Preset)
	}
	link := st.Encode()
	if !strings.Contains(link, "exp=era-6.6-vs-6.12") || !strings.Contains(link, "arms=3") || !strings.Contains(link, "c.DELAY_DEQUEUE=false") {
		t.Fatalf("link %s", link)
	}
	back, err := Parse(link)
	if err != nil || back.Encode() != link || !back.IsExperiment() {
		t.Fatalf("round trip of %s: %v %q", link, err, back.Encode())
	}
}
