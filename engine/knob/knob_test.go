package knob

import (
	"strings"
	"testing"
)

func TestTableRowsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Table() {
		if d.Doc == "" || d.Name == "" {
			t.Errorf("knob %d lacks name or doc", d.ID)
		}
		if seen[d.Name] {
			t.Errorf("duplicate knob %s", d.Name)
		}
		seen[d.Name] = true
		if d.Default < d.Min || d.Default > d.Max {
			t.Errorf("%s: default %d outside %d..%d", d.Name, d.Default, d.Min, d.Max)
		}
		if d.Kind == Enum && int(d.Max) != len(d.Values)-1 {
			t.Errorf("%s: enum max %d but %d values", d.Name, d.Max, len(d.Values))
		}
	}
	for _, must := range []string{"SIS_PROP", "SIS_CORE", "WA_IDLE", "WA_WEIGHT", "WA_BIAS", "sched_latency_ns", "probe_ns", "ctx_switch_ns", "ipi_ns"} {
		if !seen[must] {
			t.Errorf("knob table lacks %s", must)
		}
	}
}

func TestSetParsesEveryBoolSpellingAndRejectsBadValues(t *testing.T) {
	v := Defaults()
	for _, s := range []string{"false", "0", "off", "OFF", "no"} {
		v = Defaults()
		if err := v.Set("SIS_CORE", s); err != nil || v.On(SIS_CORE) {
			t.Errorf("SIS_CORE=%s: err %v on %v", s, err, v.On(SIS_CORE))
		}
	}
	if err := v.Set("sis_core", "on"); err != nil || !v.On(SIS_CORE) {
		t.Errorf("case-insensitive name: %v", err)
	}
	err := v.Set("SIS_NOPE", "1")
	if err == nil || !strings.Contains(err.Error(), "SIS_NOPE") || !strings.Contains(err.Error(), "SIS_PROP") {
		t.Errorf("unknown knob error %v", err)
	}
	if err := v.Set("probe_ns", "-1"); err == nil || !strings.Contains(err.Error(), "0..") {
		t.Errorf("range error %v", err)
	}
	if err := v.Set("sched_tunable_scaling", "linear"); err != nil || v.Get(TunableScaling) != ScalingLinear {
		t.Errorf("enum set: %v", err)
	}
	if err := v.Set("sched_tunable_scaling", "cubic"); err == nil || !strings.Contains(err.Error(), "none|log|linear") {
		t.Errorf("enum error %v", err)
	}
	base := Defaults()
	if d := v.Diff(&base); len(d) == 0 {
		t.Errorf("Diff found no change")
	}
	if m := v.Map(); len(m) != len(Table()) {
		t.Errorf("Map has %d of %d knobs", len(m), len(Table()))
	}
}

// Int knobs refuse empty, NaN, infinite, overflowing and out-of-range
// values naming the knob; a misspelt name gets a suggestion (issue 9).
func TestIntKnobRefusesBadValues(t *testing.T) {
	v := Defaults()
	for _, s := range []string{"", "NaN", "Inf", "1e3", "99999999999999999999", "-5"} {
		err := v.Set("probe_ns", s)
		if err == nil || !strings.Contains(err.Error(), "probe_ns") {
			t.Errorf("probe_ns=%q: %v", s, err)
		}
	}
	if err := v.Set("SIS_PORP", "1"); err == nil || !strings.Contains(err.Error(), `did you mean "SIS_PROP"`) {
		t.Errorf("misspelt knob: %v", err)
	}
}
