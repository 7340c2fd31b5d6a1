package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"schedplay/presets"
)

func TestMachineDetectFromTree(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "vm box.json")
	tree := filepath.Join("..", "..", "detect", "testdata", "vm-2vcpu.txtar")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"machine", "detect", "--sysfs", tree, "-o", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"2 CPUs", "missing: no cache information", "missing: no cpuidle directory", "costs not measured", "wrote " + out} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := presets.ParseMachine(data, out)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Name != "vm-box" || spec.NumCPUs() != 2 {
		t.Errorf("name %q, %d CPUs; want vm-box, 2", spec.Name, spec.NumCPUs())
	}
	// The file runs, as --machine-file and as --preset FILE.json.
	for _, flag := range []string{"--machine-file", "--preset"} {
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"run", flag, out, "--workload", "pipe:l=500", "--duration", "50ms"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("run %s: exit %d: %s", flag, code, stderr.String())
		}
	}
	// An existing file is kept unless --force.
	stderr.Reset()
	if code := run([]string{"machine", "detect", "--sysfs", tree, "-o", out}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--force") {
		t.Errorf("overwriting without --force: exit %d, %s", code, stderr.String())
	}
	if code := run([]string{"machine", "detect", "--sysfs", tree, "-o", out, "--force", "--name", "other"}, &stdout, &stderr); code != exitOK {
		t.Errorf("--force: exit %d, %s", code, stderr.String())
	}
	if data, _ := os.ReadFile(out); !bytes.Contains(data, []byte(`"name": "other"`)) {
		t.Errorf("--force did not replace the file")
	}
}

func TestMachineDetectQuickThisMachine(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu here")
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"machine", "detect", "--quick"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	if _, err := presets.ParseMachine(stdout.Bytes(), "<stdout>"); err != nil {
		t.Fatalf("the preset printed does not load: %v", err)
	}
}

func TestMachineUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"machine"}, exitUsage, "sub-verb"},
		{[]string{"machine", "detct"}, exitUsage, "unknown sub-verb"},
		{[]string{"machine", "detect", "--sysfs", "/nonexistent-tree"}, exitUsage, "--sysfs"},
		{[]string{"machine", "detect", "--budget", "1h"}, exitUsage, "--budget"},
		{[]string{"machine", "detect", "extra"}, exitUsage, "unexpected argument"},
		{[]string{"machine", "-h"}, exitOK, "usage: schedsim machine detect"},
		{[]string{"help", "machine"}, exitOK, "usage: schedsim machine detect"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, output %q; want exit %d with %q", tc.args, code, stdout.String()+stderr.String(), tc.code, tc.want)
		}
	}
}
