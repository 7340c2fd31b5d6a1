package knob

import (
	"strings"
	"testing"
)

func TestEraSwitchesDefaultsAndRefusesKnobsItLacks(t *testing.T) {
	v := Defaults()
	if v.Era() != Era52 || !v.On(SIS_PROP) || v.On(SIS_UTIL) {
		t.Fatalf("defaults: era %v SIS_PROP %v SIS_UTIL %v", v.Era(), v.On(SIS_PROP), v.On(SIS_UTIL))
	}
	if err := v.Set("era", "6.6"); err != nil {
		t.Fatal(err)
	}
	if v.Era() != Era66 || v.On(SIS_PROP) || !v.On(SIS_UTIL) || v.On(GENTLE_FAIR_SLEEPERS) {
		t.Fatalf("6.6: SIS_PROP %v SIS_UTIL %v GENTLE %v", v.On(SIS_PROP), v.On(SIS_UTIL), v.On(GENTLE_FAIR_SLEEPERS))
	}
	err := v.Set("GENTLE_FAIR_SLEEPERS", "1")
	if err == nil || !strings.Contains(err.Error(), "GENTLE_FAIR_SLEEPERS") || !strings.Contains(err.Error(), "6.6") {
		t.Fatalf("absent knob accepted or error unclear: %v", err)
	}
	// Setting an absent knob to what it reads as is harmless.
	if err := v.Set("GENTLE_FAIR_SLEEPERS", "0"); err != nil {
		t.Fatal(err)
	}
	// A knob the user changed survives an era switch if the era has it…
	w := Defaults()
	if err := w.Set("SIS_CORE", "0"); err != nil {
		t.Fatal(err)
	}
	if err := w.Set("era", "6.6"); err != nil || w.On(SIS_CORE) {
		t.Fatalf("SIS_CORE=0 then era=6.6: %v, SIS_CORE %v", err, w.On(SIS_CORE))
	}
	// …and the switch is refused, naming it, if not.
	x := Defaults()
	if err := x.Set("sched_latency_ns", "24000000"); err != nil {
		t.Fatal(err)
	}
	err = x.Set("era", "6.6")
	if err == nil || !strings.Contains(err.Error(), "sched_latency_ns") {
		t.Fatalf("era switch kept a knob 6.6 lacks: %v", err)
	}
	if x.Era() != Era52 {
		t.Fatal("a refused era switch changed the era")
	}
}

func TestDiffPutsTheEraFirst(t *testing.T) {
	base := Defaults()
	v := Defaults()
	if err := v.Set("era", "6.6"); err != nil {
		t.Fatal(err)
	}
	d := v.Diff(&base)
	if len(d) == 0 || d[0] != "era=6.6" {
		t.Fatalf("diff %v: era not first", d)
	}
	// Re-applying the diff in order reproduces the values.
	r := Defaults()
	for _, s := range d {
		name, val, _ := strings.Cut(s, "=")
		if err := r.Set(name, val); err != nil {
			t.Fatalf("re-apply %s: %v", s, err)
		}
	}
	if r != v {
		t.Fatalf("re-applied diff differs: %v", r.Diff(&v))
	}
}

func TestEveryEraHasItsKnobsNamed(t *testing.T) {
	for _, e := range Eras() {
		if len(KnobsOf(e)) == 0 {
			t.Fatalf("era %s has no knobs", e)
		}
		if _, err := ParseEra(e.String()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseEra("4.19"); err == nil {
		t.Fatal("unknown era accepted")
	}
}

// The EEVDF knobs exist only in era 6.6: era 5.2 (and 2.6-o1) refuse them
// by name, and switching to 6.6 makes them settable with the v6.6
// features.h defaults.
func TestEEVDFKnobsOnlyIn66(t *testing.T) {
	for _, name := range []string{"PLACE_LAG", "PLACE_DEADLINE_INITIAL", "RUN_TO_PARITY", "NEXT_BUDDY", "sched_base_slice_ns"} {
		for _, era := range []string{"5.2", "2.6-o1"} {
			v := Defaults()
			if err := v.Set("era", era); err != nil {
				t.Fatal(err)
			}
			val := "1" // absent features read as off: only "on" is refused
			if name == "sched_base_slice_ns" {
				val = "3000000"
			}
			err := v.Set(name, val)
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), era) {
				t.Errorf("era %s accepted %s=%s or did not name it: %v", era, name, val, err)
			}
		}
	}
	v := Defaults()
	if err := v.Set("era", "6.6"); err != nil {
		t.Fatal(err)
	}
	if !v.On(PLACE_LAG) || !v.On(PLACE_DEADLINE_INITIAL) || !v.On(RUN_TO_PARITY) || v.On(NEXT_BUDDY) || v.Get(SchedBaseSlice) != 750000 {
		t.Fatalf("6.6 defaults: PLACE_LAG %v PLACE_DEADLINE_INITIAL %v RUN_TO_PARITY %v NEXT_BUDDY %v base slice %d",
			v.On(PLACE_LAG), v.On(PLACE_DEADLINE_INITIAL), v.On(RUN_TO_PARITY), v.On(NEXT_BUDDY), v.Get(SchedBaseSlice))
	}
	for _, name := range []string{"sched_min_granularity_ns", "SIS_BOUND", "LN_PREEMPT"} {
		if err := v.Set(name, "1000000"); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("6.6 accepted %s: %v", name, err)
		}
	}
}

// RegisterEra refuses, by name, a duplicate era, a default for a knob the
// base era lacks and a default out of the knob's range (and registers
// nothing then).
func TestRegisterEraRefusals(t *testing.T) {
	before := len(Eras())
	for _, c := range []struct {
		name     string
		defaults map[ID]int64
		want     string
	}{
		{"6.6", nil, "exists already"},
		{"6.6-bounded", map[ID]int64{SIS_BOUND: 1}, "does not exist in era 6.6"},
		{"6.6-hz5", map[ID]int64{HZ: 5}, "hz"},
	} {
		_, err := RegisterEra(c.name, Era66, c.defaults)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RegisterEra(%s): %v, want an error with %q", c.name, err, c.want)
		}
	}
	if len(Eras()) != before {
		t.Errorf("a refused era was registered")
	}
}
