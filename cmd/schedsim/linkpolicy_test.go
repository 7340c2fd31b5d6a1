package main

import (
	"path/filepath"
	"strings"
	"testing"

	"schedplay/examples"
	"schedplay/playground"
)

// schedsim run --link runs the wake policy a link's arm carries: the same
// output as --policy with the example's file, but for the policy's name
// (the link's carries no directory); the arm without one runs the era's
// own search; --policy beside a link's policy is refused.
func TestRunLinkPolicy(t *testing.T) {
	const file = "rotating-window.star"
	var src string
	for _, p := range examples.Policies() {
		if p.File == file {
			src = p.Src
		}
	}
	if src == "" {
		t.Fatalf("no example %s", file)
	}
	st, err := playground.Parse("v=1&preset=amd-7950x-16c-32t&w=schbench:m%3D2,t%3D8&ab=1&b.era=5.2&era=5.2&seed=5")
	if err != nil {
		t.Fatal(err)
	}
	st.Policies[1] = playground.Policy{Name: file, Src: src}
	link := "http://example.org/schedplay/#" + st.Encode()
	common := []string{"--duration", "200ms", "--format", "json", "--no-wall-time"}
	flags := []string{"--preset", "amd-7950x-16c-32t", "--workload", "schbench:m=2,t=8", "--era", "5.2", "--seed", "5"}

	got, stderr, code := runCLI(t, append([]string{"run", "--link", link, "--arm", "B"}, common...)...)
	if code != 0 {
		t.Fatalf("--link arm B: exit %d: %s", code, stderr)
	}
	path := filepath.Join("..", "..", "examples", "policies", file)
	want, stderr, code := runCLI(t, append(append([]string{"run", "--policy", path}, flags...), common...)...)
	if code != 0 {
		t.Fatalf("--policy: exit %d: %s", code, stderr)
	}
	if !strings.Contains(got, `"`+file+`"`) {
		t.Fatalf("--link's run does not name the policy %s", file)
	}
	if strings.ReplaceAll(want, path, file) != got {
		t.Errorf("--link arm B differs from --policy %s", path)
	}
	none, stderr, code := runCLI(t, append(append([]string{"run"}, flags...), common...)...)
	if code != 0 {
		t.Fatalf("no policy: exit %d: %s", code, stderr)
	}
	if none == got {
		t.Errorf("the policy's run is the era's own: the test tells nothing")
	}
	armA, _, code := runCLI(t, append([]string{"run", "--link", link, "--arm", "A"}, common...)...)
	if code != 0 || armA != none {
		t.Errorf("--link arm A (no policy): exit %d, output differs from the flags' run", code)
	}
	_, stderr, code = runCLI(t, append([]string{"run", "--link", link, "--arm", "B", "--policy", path}, common...)...)
	if code != 2 || !strings.Contains(stderr, "give it without --policy") {
		t.Errorf("--policy beside the link's: exit %d, %q", code, stderr)
	}
}
