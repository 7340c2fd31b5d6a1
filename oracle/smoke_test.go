package oracle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"schedplay/presets"
)

// TestKernelSmoke is make test's kernel case (make kernel-smoke sets
// SCHEDPLAY_KERNEL_SMOKE=1): Debian's 6.12 on 8 vCPUs (2 sockets × 2
// cores × 2 threads), schbench for 1 s, booted twice. It checks the
// plumbing, not the verdicts: the guest's topology is the simulated
// machine's (Run refuses otherwise), both traces parse, every measure is
// computed on both sides, and the two boots give the same trace byte for
// byte (icount: the oracle is deterministic). It logs the comparison.
// Without qemu it skips, unless CI is set.
func TestKernelSmoke(t *testing.T) {
	if os.Getenv("SCHEDPLAY_KERNEL_SMOKE") == "" {
		t.Skip("the kernel smoke case runs with make kernel-smoke (SCHEDPLAY_KERNEL_SMOKE=1)")
	}
	if missing := Requirements(); len(missing) > 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and this machine lacks %v (make kernel-deps)", missing)
		}
		t.Skipf("this machine lacks %v (make kernel-deps)", missing)
	}
	k, err := KernelByName("6.12")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := presets.Machine("intel-2s-44c-88t")
	shape, err := ParseSMP("sockets=2,cores=2,threads=2")
	if err != nil {
		t.Fatal(err)
	}
	var traces [2][]byte
	for i := range traces {
		dir := t.TempDir()
		start := time.Now()
		c, err := Run(context.Background(), Options{Kernel: k, Base: base, Shape: shape, Workloads: []string{"schbench:m=2,t=2"},
			Duration: time.Second, Seed: 1, Time: Icount, Cache: cache, Keep: dir, Logf: t.Logf})
		if err != nil {
			t.Fatalf("boot %d: %v", i+1, err)
		}
		var out bytes.Buffer
		c.WriteText(&out)
		t.Logf("boot %d in %v:\n%s", i+1, time.Since(start).Round(time.Second), out.String())
		if c.Real.Wakeups == 0 || c.Sim.Wakeups == 0 || len(c.Measures) != 22 { // 18 judged, the latencies and the per-operation counts
			t.Errorf("boot %d: %d real and %d simulated wakeups, %d measures", i+1, c.Real.Wakeups, c.Sim.Wakeups, len(c.Measures))
		}
		for _, r := range c.Measures {
			if r.Verdict != "ok" && r.Verdict != "differs" && r.Verdict != "—" {
				t.Errorf("measure %s: verdict %q", r.Name, r.Verdict)
			}
		}
		if traces[i], err = os.ReadFile(filepath.Join(dir, "guest.ftrace.txt")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Errorf("two boots of the same guest gave different traces (%d and %d bytes): the oracle is not deterministic", len(traces[0]), len(traces[1]))
	}
}
