package playground

import (
	"testing"
)

// FuzzLink: a share link either is refused — and the page falls back to
// the default state — or decodes to a state that validates and whose own
// link decodes to the same state.
func FuzzLink(f *testing.F) {
	for _, s := range []string{"#v=1&preset=intel-2s-44c-88t&w=schbench:m=2,t=22&SIS_CORE=0&seed=7&speed=1",
		"#w=uperf:size=", "#speed=NaN", "#ab=1&b.SIS_PROP=0", "#exp=v1-sis-schbench", "#machine=eyJ9",
		"#preset=amd-zen4-2s-256c-512t&w=netperf:n=4", "#seed=18446744073709551615", "#%zz", "#w=hog:n=2&w=pipe:l=3",
		"#exp=v1-sis-schbench-one-socket", "#ab=1&arms=4&c.SIS_CORE=0&d.SIS_PROP=0", "#arms=3", "#preset=p4-up-1c-1t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frag string) {
		st, err := Parse(frag)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			if st.Encode() != Default().Encode() {
				t.Fatalf("Parse(%q) failed (%v) but did not fall back to the default: %q", frag, err, st.Encode())
			}
			return
		}
		if err := st.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted a state that does not validate: %v", frag, err)
		}
		enc := st.Encode()
		again, err := Parse(enc)
		if err != nil {
			t.Fatalf("the link %q of an accepted state does not decode: %v", enc, err)
		}
		if again.Encode() != enc {
			t.Fatalf("round trip: %q -> %q", enc, again.Encode())
		}
	})
}
