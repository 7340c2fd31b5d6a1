package knob

import (
	"strings"
	"testing"
)

// FuzzKnobSet: setting a knob either fails with an error that names the
// knob (or says it is unknown), or stores a value within the knob's range
// that its own text form reads back unchanged.
func FuzzKnobSet(f *testing.F) {
	for _, s := range [][2]string{{"SIS_CORE", "off"}, {"probe_ns", "60"}, {"probe_ns", ""}, {"probe_ns", "NaN"},
		{"SHARED_RUNQ", "all"}, {"hz", "250"}, {"cpuidle_governor", "teo"}, {"SIS_COR", "1"}, {"migrate_llc_ns", "-1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		v := Defaults()
		err := v.Set(name, value)
		id, known := Lookup(name)
		if err != nil {
			if known && !strings.Contains(err.Error(), "knob "+table[id].Name) {
				t.Fatalf("Set(%q, %q): error %q does not name the knob", name, value, err)
			}
			if !known && !strings.Contains(err.Error(), "unknown knob") {
				t.Fatalf("Set(%q, %q): error %q", name, value, err)
			}
			return
		}
		d := ByID(id)
		x := v.Get(id)
		if x < d.Min || x > d.Max {
			t.Fatalf("Set(%q, %q) stored %d outside %s", name, value, x, d.Allowed())
		}
		back, err := d.Parse(d.Format(x))
		if err != nil || back != x {
			t.Fatalf("%s: %d formats as %q which reads back as %d, %v", name, x, d.Format(x), back, err)
		}
	})
}
