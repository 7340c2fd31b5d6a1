package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRTAppCorpus loads every rt-app example of a directory and reports,
// per file, "loaded" or "refused: <reason>". The corpus is rt-app's own
// doc/examples (github.com/scheduler-tools/rt-app), not vendored here:
// point SCHEDPLAY_RTAPP_EXAMPLES at a directory of its *.json files, e.g.
//
//	git -C rt-app archive HEAD doc/examples | tar -x -C /tmp
//	SCHEDPLAY_RTAPP_EXAMPLES=/tmp/doc/examples go test ./engine/workload -run Corpus -v
//
// A refusal must name what was refused (a policy, a key, an event); a
// crash or an unexplained error fails the test. The testdata/rtapp files
// run always.
func TestRTAppCorpus(t *testing.T) {
	dirs := []string{"testdata/rtapp"}
	if d := os.Getenv("SCHEDPLAY_RTAPP_EXAMPLES"); d != "" {
		dirs = append(dirs, d)
	}
	var files []string
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	loaded := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		verdict := "loaded"
		// The file as written first (lines and columns of the file),
		// then the spec a run carries, against an 8-CPU machine.
		_, err = ParseRTApp(data)
		if err == nil {
			err = Check(RTAppSpec(data), 8)
		}
		if err != nil {
			msg := err.Error()
			i := strings.Index(msg, "rtapp:")
			if i < 0 || strings.Contains(msg, "b64=") {
				t.Errorf("%s: refused without an rt-app reason, or with the base64 blob: %v", f, err)
				i = 0
			}
			verdict = "refused: " + msg[i:]
		} else {
			loaded++
		}
		t.Log(fmt.Sprintf("| %s | %s |", filepath.Base(f), verdict))
	}
	t.Logf("%d of %d files loaded", loaded, len(files))
}
