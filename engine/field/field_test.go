package field

import (
	"strings"
	"testing"
)

func TestIntRefusesWhatIsNotAnInRangeInteger(t *testing.T) {
	for _, s := range []string{"", " ", "NaN", "inf", "-Inf", "1e3", "0x10", "1.5", "99999999999999999999", "-1", "101"} {
		if _, err := Int("workload uperf: key size", s, 0, 100); err == nil {
			t.Errorf("Int(%q) accepted", s)
		} else if !strings.Contains(err.Error(), "key size") || !strings.Contains(err.Error(), "0..100") {
			t.Errorf("Int(%q): %v does not name the key and the range", s, err)
		}
	}
	if x, err := Int("k", " 42 ", 0, 100); err != nil || x != 42 {
		t.Fatalf("Int(42) = %d, %v", x, err)
	}
}

func TestFloatRefusesNaNAndInfinities(t *testing.T) {
	for _, s := range []string{"", "NaN", "nan", "+Inf", "-inf", "Infinity", "1e400", "x"} {
		if _, err := Float("link key speed", s, 0.001, 1000); err == nil {
			t.Errorf("Float(%q) accepted", s)
		}
	}
	if x, err := Float("s", "2.5", 0.001, 1000); err != nil || x != 2.5 {
		t.Fatalf("Float(2.5) = %g, %v", x, err)
	}
}

func TestSuggest(t *testing.T) {
	valid := []string{"SIS_CORE", "SIS_PROP", "SIS_BOUND", "schbench", "hackbench"}
	for word, want := range map[string]string{"SIS_COR": "SIS_CORE", "sis_prop": "SIS_PROP", "hackbnech": "hackbench", "zzz": ""} {
		got := Suggest(word, valid)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
