package workload

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestRTAppWorkgenAgrees reads each example of Debian's rt-app package
// and of testdata/rtapp twice: as written, in the workgen dialect
// (rtapp_workgen.go), and as rt-app's real workgen script rewrites it
// (/usr/bin/workgen -d: the rewrite without running rt-app). The two
// readings must be the same tasks, phases and events, up to the names
// workgen gives repeated keys and the value it gives a bare suspend (the
// task's name; rt-app ignores it). Without workgen the test skips,
// except under CI=true (and always under js/wasm).
func TestRTAppWorkgenAgrees(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("no subprocesses under js/wasm")
	}
	wg, err := exec.LookPath("workgen")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("workgen (package rt-app) is missing: %v", err)
		}
		t.Skip("workgen (package rt-app) is not installed")
	}
	var files []string
	for _, d := range []string{"/usr/share/doc/rt-app/examples", "testdata/rtapp"} {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".json") && filepath.Base(filepath.Dir(p)) != "merge" {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	compared := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "unikid.json")
		if b, err := exec.Command(wg, "-d", "-o", out, f).CombinedOutput(); err != nil {
			t.Fatalf("%s: workgen: %v\n%s", f, err, b)
		}
		rewritten, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		ours, errOurs := ParseRTApp(data)
		theirs, errTheirs := ParseRTApp(rewritten)
		if (errOurs == nil) != (errTheirs == nil) {
			t.Errorf("%s: as written: %v; as workgen rewrites it: %v", f, errOurs, errTheirs)
			continue
		}
		if errOurs != nil {
			continue
		}
		a, b := rtappShape(ours), rtappShape(theirs)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: our reading\n\t%v\nworkgen's\n\t%v", f, a, b)
		}
		compared++
	}
	t.Logf("%d of %d files compared", compared, len(files))
}

// rtappShape is app without what workgen changes: event keys (it renames
// repeats), positions, and a suspend's value (own name or "").
func rtappShape(app *RTApp) *RTApp {
	c := app.clone()
	for i := range c.Tasks {
		t := &c.Tasks[i]
		t.line = 0
		for j := range t.Phases {
			for k := range t.Phases[j].Events {
				e := &t.Phases[j].Events[k]
				e.Key, e.line = "", 0
				if e.Kind == "suspend" && e.Ref == t.Name {
					e.Ref = ""
				}
			}
		}
	}
	return c
}
