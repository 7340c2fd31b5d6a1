package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// TestRTAppCorpus loads every rt-app example of a directory and reports,
// per file, "loaded" or "refused: <reason>". The corpus is rt-app's own
// doc/examples (github.com/scheduler-tools/rt-app), not vendored here:
// point SCHEDPLAY_RTAPP_EXAMPLES at a directory of its *.json files, e.g.
//
//	git -C rt-app archive HEAD doc/examples | tar -x -C /tmp
//	SCHEDPLAY_RTAPP_EXAMPLES=/tmp/doc/examples go test ./engine/workload -run Corpus -v
//
// A directory named "merge" is one run of its files merged in name
// order, as rt-app's doc/merge.py merges them. A refusal must name what
// was refused (a policy, a key, an event); a crash or an unexplained
// error fails the test. The testdata/rtapp files run always.
func TestRTAppCorpus(t *testing.T) {
	dirs := []string{"testdata/rtapp"}
	if d := os.Getenv("SCHEDPLAY_RTAPP_EXAMPLES"); d != "" {
		dirs = append(dirs, d)
	}
	loaded, n := 0, 0
	for _, d := range dirs {
		for _, u := range rtappCorpus(t, d) {
			v, ok := rtappVerdict(t, u)
			if ok {
				loaded++
			}
			n++
			t.Log(fmt.Sprintf("| %s | %s |", u.name, v))
		}
	}
	t.Logf("%d of %d runs loaded", loaded, n)
}

// rtappUnit is one run of the corpus: a file, or a merge directory's
// files.
type rtappUnit struct {
	name  string // relative to the corpus directory; a merge directory ends in "/"
	files []RTAppFile
	paths []string // relative to the corpus directory, one per file
}

// rtappCorpus walks dir for *.json files, in name order; the files of a
// directory named "merge" make one unit.
func rtappCorpus(t *testing.T, dir string) []rtappUnit {
	t.Helper()
	var units []rtappUnit
	merges := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		f := RTAppFile{Name: filepath.Base(p), Data: data}
		if parent := filepath.Dir(rel); filepath.Base(parent) == "merge" {
			if i, ok := merges[parent]; ok {
				units[i].files = append(units[i].files, f)
				units[i].paths = append(units[i].paths, rel)
				return nil
			}
			merges[parent] = len(units)
			units = append(units, rtappUnit{name: parent + "/", files: []RTAppFile{f}, paths: []string{rel}})
			return nil
		}
		units = append(units, rtappUnit{name: rel, files: []RTAppFile{f}, paths: []string{rel}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(units, func(i, j int) bool { return units[i].name < units[j].name })
	return units
}

// rtappVerdict reads u as the page does (one file, or the files merged),
// checks the spec a run carries and runs it for 20 ms on an 8-CPU
// machine of the default era: "loaded", or "refused: <error>". A file
// that asks for a SCHED_OTHER custom slice ("dl-runtime", which
// sched_setattr takes from Linux 6.12) runs in era 6.12 instead, the only
// one with per-task slices: "loaded in era 6.12 (custom slices)".
func rtappVerdict(t *testing.T, u rtappUnit) (string, bool) {
	t.Helper()
	var spec string
	var err error
	if len(u.files) == 1 {
		// The file as written first (lines and columns of the file).
		if _, err = ParseRTApp(u.files[0].Data); err == nil {
			spec = RTAppSpec(u.files[0].Data)
		}
	} else {
		spec, err = RTAppFilesSpec(u.files)
	}
	if err == nil {
		err = Check(spec, 8)
	}
	slices := false
	if err == nil {
		app, _ := ParseRTAppSpec(spec)
		for i := range app.Tasks {
			slices = slices || app.Tasks[i].Slice > 0
		}
		k := knob.Defaults()
		if slices {
			if err := k.Set("era", "6.12"); err != nil {
				t.Fatal(err)
			}
		}
		s, serr := engine.New(engine.Config{Machine: small(t, 1, 8, 1, 8, machine.Contiguous), Knobs: k, Seed: 1})
		if serr != nil {
			t.Fatal(serr)
		}
		if _, err = Add(s, spec, ""); err == nil {
			s.RunUntil(20 * engine.Millisecond)
		}
	}
	if err == nil && slices {
		return "loaded in era 6.12 (custom slices)", true
	}
	if err == nil {
		return "loaded", true
	}
	msg := err.Error()
	i := strings.Index(msg, "rtapp:")
	if i < 0 || strings.Contains(msg, "b64=") {
		t.Errorf("%s: refused without an rt-app reason, or with the base64 blob: %v", u.name, err)
		i = 0
	}
	return "refused: " + msg[i:], false
}

// rtappPositions are the positions in a refusal ("(line 4, column 10)",
// "(thread0.json, line 4, column 10)").
var rtappPositions = regexp.MustCompile(` \((?:[^()]*, )?line \d+(?:, column \d+)?\)`)

// shortVerdict is a verdict as a manifest keeps it: without positions
// and without the "rtapp: " prefix, cut at 120 characters.
func shortVerdict(v string) string {
	v = strings.Replace(rtappPositions.ReplaceAllString(v, ""), "refused: rtapp: ", "refused: ", 1)
	if r := []rune(v); len(r) > 120 {
		v = string(r[:120]) + "…"
	}
	return v
}

// TestRTAppDebianManifest checks every rt-app file of Debian's rt-app
// package (1.0: /usr/share/doc/rt-app, installed by .ci/run) against
// testdata/rtapp-debian-manifest.txt: the file's sha256 and its verdict
// (a merge directory's files are one run: each carries its verdict). A
// changed file, a file added or gone, or a changed verdict fails. Without
// the package the test skips, except under CI=true. Set
// SCHEDPLAY_RTAPP_MANIFEST_WRITE=1 to rewrite the manifest after a
// deliberate change.
func TestRTAppDebianManifest(t *testing.T) {
	checkRTAppManifest(t, "/usr/share/doc/rt-app", "testdata/rtapp-debian-manifest.txt",
		"rt-app 1.0 as Debian packages it (rt-app 1.0-1): /usr/share/doc/rt-app", os.Getenv("CI") == "true")
}

// TestRTAppHeadManifest is the same for rt-app's doc/ at HEAD (not on CI
// machines: point SCHEDPLAY_RTAPP_HEAD_DOC at an extracted doc/, e.g.
// git -C rt-app archive HEAD doc | tar -x -C /tmp/rtapp-head).
func TestRTAppHeadManifest(t *testing.T) {
	dir := os.Getenv("SCHEDPLAY_RTAPP_HEAD_DOC")
	if dir == "" {
		t.Skip("SCHEDPLAY_RTAPP_HEAD_DOC is not set")
	}
	checkRTAppManifest(t, dir, "testdata/rtapp-head-manifest.txt",
		"rt-app HEAD doc/ (github.com/scheduler-tools/rt-app 55cb0c0)", false)
}

// TestRTAppGrubManifest is the same for the doc/ of rt-app's wip/grub
// branch (github.com/scheduler-tools/rt-app 27131c5, Juri Lelli's
// SCHED_DEADLINE bandwidth-reclaiming examples, deadline*.json; not on CI
// machines: point SCHEDPLAY_RTAPP_GRUB_DOC at an extracted doc/, e.g.
// git -C rt-app archive wip/grub doc | tar -x -C /tmp/rtapp-grub).
func TestRTAppGrubManifest(t *testing.T) {
	dir := os.Getenv("SCHEDPLAY_RTAPP_GRUB_DOC")
	if dir == "" {
		t.Skip("SCHEDPLAY_RTAPP_GRUB_DOC is not set")
	}
	checkRTAppManifest(t, dir, "testdata/rtapp-grub-manifest.txt",
		"rt-app wip/grub doc/ (github.com/scheduler-tools/rt-app 27131c5)", false)
}

func checkRTAppManifest(t *testing.T, dir, manifest, title string, required bool) {
	if _, err := os.Stat(dir); err != nil {
		if required {
			t.Fatalf("%s is missing (install the rt-app package): %v", dir, err)
		}
		t.Skipf("%s is missing: %v", dir, err)
	}
	var lines []string
	for _, u := range rtappCorpus(t, dir) {
		v, _ := rtappVerdict(t, u)
		v = shortVerdict(v)
		for i, f := range u.files {
			sum := sha256.Sum256(f.Data)
			lines = append(lines, u.paths[i]+"\t"+hex.EncodeToString(sum[:])+"\t"+v)
		}
	}
	got := "# " + title + "\n# path\tsha256\tverdict (a merge/ directory's files are one merged run)\n" + strings.Join(lines, "\n") + "\n"
	if os.Getenv("SCHEDPLAY_RTAPP_MANIFEST_WRITE") == "1" {
		if err := os.WriteFile(manifest, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		path, rest, _ := strings.Cut(l, "\t")
		want[path] = rest
	}
	seen := map[string]bool{}
	for _, l := range lines {
		path, rest, _ := strings.Cut(l, "\t")
		seen[path] = true
		w, ok := want[path]
		switch {
		case !ok:
			t.Errorf("%s: not in %s (got %q)", path, manifest, rest)
		case w != rest:
			ws, wv, _ := strings.Cut(w, "\t")
			gs, gv, _ := strings.Cut(rest, "\t")
			if ws != gs {
				t.Errorf("%s: sha256 %s, the manifest says %s: the file changed", path, gs, ws)
			}
			if wv != gv {
				t.Errorf("%s: verdict\n\t%s\nthe manifest says\n\t%s", path, gv, wv)
			}
		}
	}
	for _, path := range sortedKeys(want) {
		if !seen[path] {
			t.Errorf("%s: in %s but not in %s", path, manifest, dir)
		}
	}
}
