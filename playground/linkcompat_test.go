package playground

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// armLine is what a link makes of one arm: the run it opens (machine,
// workloads, knobs, seed), in a stable text.
func armLine(st State, arm int) string {
	c := st.Config(arm)
	machine := c.Preset
	if c.Machine != nil {
		machine = "machine:" + c.Machine.Name
	}
	return fmt.Sprintf("arm %c: %s | %s | %s | seed %d", 'A'+arm, machine, strings.Join(c.Workloads, " + "), strings.Join(c.Knobs, " "), c.Seed)
}

// Links written on 2026-12-02 (testdata/links-v1.txt: each link, then
// the run each of its arms opens) still open the same runs: a change to
// how links are read shows here, and must either keep them or move
// LinkVersion and say what changed.
func TestOldLinksOpenTheSameRuns(t *testing.T) {
	data, err := os.ReadFile("testdata/links-v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	var link string
	var st State
	arm := 0
	for n, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if !strings.HasPrefix(line, "\t") {
			if st.Preset != "" && arm != st.NumArms() {
				t.Errorf("link %q opens %d arms, the file lists %d", link, st.NumArms(), arm)
			}
			link, arm = line, 0
			if st, err = Parse(link); err != nil {
				t.Errorf("line %d: link %q no longer opens: %v", n+1, link, err)
			}
			continue
		}
		if arm >= st.NumArms() {
			t.Errorf("line %d: link %q opens only %d arms", n+1, link, st.NumArms())
			continue
		}
		if got, want := armLine(st, arm), strings.TrimPrefix(line, "\t"); got != want {
			t.Errorf("line %d: link %q arm %c opens\n\t%s\nwas\n\t%s", n+1, link, 'A'+arm, got, want)
		}
		arm++
	}
}

// A link of an older version that linkChanges lists opens, with a banner
// naming what changed; one of a version neither current nor listed is
// refused naming the versions read; a current link has no banner.
func TestOlderLinkVersionOpensWithBanner(t *testing.T) {
	old := "v=0&preset=" + DefaultPreset + "&seed=3"
	if _, err := Parse(old); err == nil || !strings.Contains(err.Error(), "v=1") {
		t.Fatalf("an unlisted version: %v, want a refusal naming v=1", err)
	}
	linkChanges[0] = "seed= is read as arm A's seed only"
	defer delete(linkChanges, 0)
	st, err := Parse(old)
	if err != nil || st.Seed != 3 {
		t.Fatalf("a listed older version: %v (seed %d)", err, st.Seed)
	}
	if n := VersionNotice("#" + old); !strings.Contains(n, "v=0") || !strings.Contains(n, linkChanges[0]) {
		t.Errorf("banner %q does not name the version and the change", n)
	}
	if _, err := Parse("v=2&seed=3"); err == nil || !strings.Contains(err.Error(), "v=0, v=1") {
		t.Errorf("a newer version: %v, want a refusal naming v=0, v=1", err)
	}
	if n := VersionNotice(st.Encode()); n != "" {
		t.Errorf("a current link has a banner: %q", n)
	}
}
