package oracle

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"schedplay/engine/knob"
)

func kernel(t *testing.T, name string) *Kernel {
	t.Helper()
	k, err := KernelByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// --feature takes a kernel's own sched_feats that its era has as knobs,
// and refuses the rest naming why and what is allowed.
func TestParseFeature(t *testing.T) {
	k612, k61 := kernel(t, "6.12"), kernel(t, "6.1")
	for _, c := range []struct {
		k    *Kernel
		spec string
		want Feature
	}{
		{k612, "DELAY_DEQUEUE=0", Feature{"DELAY_DEQUEUE", false}},
		{k612, "RUN_TO_PARITY=1", Feature{"RUN_TO_PARITY", true}},
		{k612, "delay_zero=0", Feature{"DELAY_ZERO", false}}, // the knob's name, as written to the guest
		{k612, "WA_IDLE=0", Feature{"WA_IDLE", false}},
		{k61, "SIS_PROP=1", Feature{"SIS_PROP", true}},
		{k61, "BASE_SLICE=0", Feature{"BASE_SLICE", false}},
	} {
		f, err := c.k.ParseFeature(c.spec)
		if err != nil || f != c.want {
			t.Errorf("%s %s: %+v, %v (want %+v)", c.k.Name, c.spec, f, err, c.want)
		}
	}
	for _, c := range []struct {
		k          *Kernel
		spec, want string
	}{
		{k612, "DELAY_DEQUEUE", "want NAME=0|1"},
		{k612, "DELAY_DEQUEUE=2", `value "2" not allowed (allowed: 0, 1)`},
		{k612, "DELAY_DEQUEUE=true", `value "true" not allowed (allowed: 0, 1)`},
		{k612, "FOO=1", "--feature FOO: not a knob (allowed for kernel 6.12: "},
		{k612, "TTWU_QUEUE=0", "a sched_feat of kernel 6.12 that the simulation has no knob for"},
		{k612, "SIS_BOUND=1", "not a sched_feat of kernel 6.12 (not in its kernel/sched/features.h: a feature knob of the simulation, in no kernel's features.h)"},
		{k612, "SHARED_RUNQ=1", "not a sched_feat of kernel 6.12"},
		{k612, "LN_SEARCH=1", "not a sched_feat of kernel 6.12"},
		{k612, "NUMA_BALANCING=0", "not a sched_feat of kernel 6.12"},
		{k612, "hz=1", "a tunable knob of the simulation"},
		{k612, "SIS_PROP=1", "not in its kernel/sched/features.h: it is one of kernel 6.1's"},
		{k61, "DELAY_DEQUEUE=0", "not in its kernel/sched/features.h: it is one of kernel 6.12's"},
		{k61, "NEXT_BUDDY=1", "knob NEXT_BUDDY does not exist in era 6.1, which the simulation runs: modelled for the v6.6 class only"},
	} {
		_, err := c.k.ParseFeature(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v (want %q)", c.k.Name, c.spec, err, c.want)
			continue
		}
		if !strings.Contains(c.spec, "=2") && !strings.Contains(c.spec, "=true") && !strings.Contains(err.Error(), "allowed for kernel "+c.k.Name+": ") {
			t.Errorf("%s %s: %v does not name the allowed features", c.k.Name, c.spec, err)
		}
	}
	if _, err := k612.ParseFeatures([]string{"DELAY_DEQUEUE=0", "DELAY_DEQUEUE=1"}); err == nil || !strings.Contains(err.Error(), "both 0 and 1") {
		t.Errorf("contradicting features: %v", err)
	}
	if fs, err := k612.ParseFeatures([]string{"DELAY_DEQUEUE=0", "DELAY_DEQUEUE=0", "PLACE_LAG=1"}); err != nil || len(fs) != 2 {
		t.Errorf("repeated feature: %v, %v", fs, err)
	}
}

// Every feature --feature allows is a Bool feature knob of the kernel's
// era and one of its sched_feats; 6.12 allows DELAY_DEQUEUE, 6.1 does not.
func TestFeatureKnobs(t *testing.T) {
	for _, k := range Kernels {
		era, err := knob.ParseEra(k.Era)
		if err != nil {
			t.Fatalf("kernel %s: era %s: %v", k.Name, k.Era, err)
		}
		allowed := k.FeatureKnobs()
		if len(allowed) == 0 {
			t.Errorf("kernel %s allows no features", k.Name)
		}
		for _, name := range allowed {
			id, _ := knob.Lookup(name)
			if ok, why := knob.Exists(id, era); !ok || !k.isSchedFeat(name) {
				t.Errorf("kernel %s allows %s: %s", k.Name, name, why)
			}
			if _, err := k.ParseFeature(name + "=0"); err != nil {
				t.Errorf("kernel %s: %v", k.Name, err)
			}
		}
	}
	has := func(k *Kernel, name string) bool {
		return strings.Contains(" "+strings.Join(k.FeatureKnobs(), " ")+" ", " "+name+" ")
	}
	if !has(kernel(t, "6.12"), "DELAY_DEQUEUE") || has(kernel(t, "6.1"), "DELAY_DEQUEUE") || has(kernel(t, "6.12"), "SIS_PROP") {
		t.Errorf("6.12 allows %v, 6.1 %v", kernel(t, "6.12").FeatureKnobs(), kernel(t, "6.1").FeatureKnobs())
	}
}

// The simulation's knob and the guest's token of a feature.
func TestFeatureTokenAndKnob(t *testing.T) {
	off, on := Feature{"DELAY_DEQUEUE", false}, Feature{"RUN_TO_PARITY", true}
	if off.Token() != "NO_DELAY_DEQUEUE" || on.Token() != "RUN_TO_PARITY" || off.Knob() != "DELAY_DEQUEUE=false" || on.Knob() != "RUN_TO_PARITY=true" {
		t.Errorf("%s %s %s %s", off.Token(), on.Token(), off.Knob(), on.Knob())
	}
	v := knob.DefaultsFor(knob.Era612)
	if err := v.Set("DELAY_DEQUEUE", "false"); err != nil || v.On(knob.DELAY_DEQUEUE) {
		t.Errorf("the simulation's knob: %v", err)
	}
}

// The guest's /init writes each feature's token into sched/features
// after the topology marker and before the features line it prints, and
// reports each write; without features it writes nothing.
func TestInitScriptWritesTheFeatures(t *testing.T) {
	dir := t.TempDir()
	bb := filepath.Join(dir, "busybox")
	if err := os.WriteFile(bb, []byte("ELF..."), 0o755); err != nil {
		t.Fatal(err)
	}
	initOf := func(fs []Feature) string {
		gz, err := buildInitramfs(initramfsOptions{Busybox: bb, GuestLoad: []byte("load"), LoadArgs: []string{"1000", "hog"}, BufferKB: 4096, Features: fs})
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(zr)
		s := string(raw)
		i := strings.Index(s, "#!/bin/busybox sh")
		j := strings.Index(s, "poweroff -f\n")
		if i < 0 || j < i {
			t.Fatal("no /init in the archive")
		}
		return s[i:j]
	}
	script := initOf([]Feature{{"DELAY_DEQUEUE", false}, {"RUN_TO_PARITY", true}})
	for _, want := range []string{
		"if echo NO_DELAY_DEQUEUE > /sys/kernel/debug/sched/features; then echo \"featureset NO_DELAY_DEQUEUE ok\"; else echo \"featureset NO_DELAY_DEQUEUE failed\"; fi\n",
		"if echo RUN_TO_PARITY > /sys/kernel/debug/sched/features; then echo \"featureset RUN_TO_PARITY ok\"",
		"echo 4096 > $T/buffer_size_kb",
		"/bin/guestload '1000' 'hog'",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("/init lacks %q:\n%s", want, script)
		}
	}
	mount, write := strings.Index(script, "mount -t debugfs"), strings.Index(script, "echo NO_DELAY_DEQUEUE")
	marker, line, load := strings.Index(script, markTopology), strings.Index(script, `echo "features $(cat`), strings.Index(script, "/bin/guestload")
	if !(mount < marker && marker < write && write < line && line < load) {
		t.Errorf("/init order: debugfs %d, marker %d, write %d, features line %d, load %d", mount, marker, write, line, load)
	}
	if s := initOf(nil); strings.Contains(s, "featureset") || strings.Contains(s, "%!") {
		t.Errorf("/init without features:\n%s", s)
	}
}

// The guest's features line confirms a feature, or the run fails naming
// it (and the write's failure when the guest reported one).
func TestCheckFeatures(t *testing.T) {
	report := guestReport(Shape{1, 1, 2, 1, 0})
	report = strings.Replace(report, "features PLACE_LAG SIS_UTIL TTWU_QUEUE\n",
		"featureset NO_DELAY_DEQUEUE ok\nfeatureset NO_PREEMPT_SHORT failed\nfeatures PLACE_LAG RUN_TO_PARITY NO_PREEMPT_SHORT NO_DELAY_DEQUEUE DELAY_ZERO SIS_UTIL\n", 1)
	v, err := parseGuestView(report)
	if err != nil {
		t.Fatal(err)
	}
	if v.FeatureWrites["NO_DELAY_DEQUEUE"] != "ok" || v.FeatureWrites["NO_PREEMPT_SHORT"] != "failed" {
		t.Errorf("writes %v", v.FeatureWrites)
	}
	if err := v.CheckFeatures([]Feature{{"DELAY_DEQUEUE", false}, {"RUN_TO_PARITY", true}}); err != nil {
		t.Errorf("applied features refused: %v", err)
	}
	if err := v.CheckFeatures(nil); err != nil {
		t.Error(err)
	}
	err = v.CheckFeatures([]Feature{{"DELAY_ZERO", false}})
	if err == nil || !strings.Contains(err.Error(), "--feature DELAY_ZERO=0: its features line does not show NO_DELAY_ZERO") {
		t.Errorf("a feature that did not take: %v", err)
	}
	err = v.CheckFeatures([]Feature{{"PREEMPT_SHORT", true}})
	if err == nil || !strings.Contains(err.Error(), "does not show PREEMPT_SHORT") {
		t.Errorf("a feature shown the other way: %v", err)
	}
	v.Features = nil
	if err := v.CheckFeatures([]Feature{{"DELAY_DEQUEUE", false}}); err == nil || !strings.Contains(err.Error(), "printed no sched features") {
		t.Errorf("no features line: %v", err)
	}
	v.Features = []string{"DELAY_DEQUEUE"}
	v.FeatureWrites = map[string]string{"NO_DELAY_DEQUEUE": "failed"}
	if err := v.CheckFeatures([]Feature{{"DELAY_DEQUEUE", false}}); err == nil || !strings.Contains(err.Error(), "writing NO_DELAY_DEQUEUE to sched/features failed") {
		t.Errorf("a failed write: %v", err)
	}
}
