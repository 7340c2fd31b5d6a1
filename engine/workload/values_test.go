package workload

import (
	"strings"
	"testing"
)

// Every key of every kind refuses an empty value, NaN, infinities,
// overflow and out-of-range numbers with an error naming the key — the
// crash of `uperf:size=` ("Channel.Write of no bytes") and friends, and
// empty values that silently became 0 (issue 9).
func TestEveryKeyRefusesBadValues(t *testing.T) {
	for _, kind := range Kinds() {
		k := registry[kind]
		for _, key := range k.AllKeys() {
			bad := []string{""}
			if key.Type == IntKey {
				bad = append(bad, "NaN", "Inf", "-Inf", "1e3", "99999999999999999999", "x")
				if key.Min > -1<<62 {
					bad = append(bad, itoa64(key.Min-1))
				}
				if key.Max < 1<<62 {
					bad = append(bad, itoa64(key.Max+1))
				}
			}
			for _, v := range bad {
				spec := kind + ":" + key.Name + "=" + v
				err := Check(spec, 8)
				if err == nil {
					t.Errorf("%s accepted", spec)
					continue
				}
				if !strings.Contains(err.Error(), key.Name) {
					t.Errorf("%s: error %q does not name the key", spec, err)
				}
			}
		}
	}
}

// The four specs of the issue, by name.
func TestIssueEmptyValueSpecs(t *testing.T) {
	for _, spec := range []string{"uperf:size=", "netperf:req=", "hackbench:s=", "compile:burst_ms="} {
		err := Check(spec, 88)
		if err == nil || !strings.Contains(err.Error(), "empty value") {
			t.Errorf("%s: %v, want an 'empty value' error", spec, err)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	if err := Check("hackbnech:g=2", 8); err == nil || !strings.Contains(err.Error(), `did you mean "hackbench"`) {
		t.Errorf("misspelt kind: %v", err)
	}
	if err := Check("schbench:mm=2", 8); err == nil || !strings.Contains(err.Error(), `did you mean "m"`) {
		t.Errorf("misspelt key: %v", err)
	}
}

func itoa64(x int64) string {
	if x < 0 {
		return "-" + itoa64(-x)
	}
	return itoa(int(x))
}
