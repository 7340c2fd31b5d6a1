package policy_test

import (
	"runtime"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/internal/benchrun"
	"schedplay/policy"
)

// BenchmarkPolicyInterpreterCost measures what the interpreter itself
// costs a wakeup, so that the README can say what a policy costs (issue
// 29): one netperf run (32 pairs on the 16-core Zen 4, 20 ms) per variant of a select_idle_sibling policy that
// calls the kernel's own (so every variant places every task alike) and
// adds one kind of work, rounds interleaved and the fastest round kept
// (a shared host's noise only adds), timed in CPU seconds of the process
// (under wasm, where there are none, the benchmark reports nothing).
// Reported in ns per wakeup: entry
// (the call into the policy and back, over no policy), builtin (one
// built-in call, probes()), call (one call of a def of the file), iter
// (one iteration of `for i in range(n): x += i`).
func BenchmarkPolicyInterpreterCost(b *testing.B) {
	const kernel = "    return kernel.select_idle_sibling()\n"
	variants := []struct{ name, src string }{
		{"none", ""},
		{"entry", "def select_idle_sibling(p, prev, target):\n" + kernel},
		{"builtin", "def select_idle_sibling(p, prev, target):\n" + strings.Repeat("    probes()\n", 20) + kernel},
		{"call", "def f(a, b):\n    return a\n\ndef select_idle_sibling(p, prev, target):\n" + strings.Repeat("    f(1, 2)\n", 10) + kernel},
		{"iter", "def select_idle_sibling(p, prev, target):\n    x = 0\n    for i in range(50):\n        x += i\n" + kernel},
	}
	per := []float64{0, 1, 20, 10, 50}
	tp := benchTopo(b, "amd-7950x-16c-32t")
	progs := make([]*policy.Program, len(variants))
	for i, v := range variants {
		if v.src == "" {
			continue
		}
		p, err := policy.Compile(v.name+".star", []byte(v.src))
		if err != nil {
			b.Fatal(err)
		}
		progs[i] = p
	}
	best := make([]float64, len(variants)) // ns per wakeup
	for n := 0; n < b.N; n++ {
		for round := 0; round < 3; round++ {
			for i := range variants {
				k := knob.Defaults()
				if err := k.Set("era", "5.2"); err != nil {
					b.Fatal(err)
				}
				cfg := engine.Config{Machine: tp, Knobs: k, Seed: 1}
				if progs[i] != nil {
					cfg.WakePolicy = progs[i].New()
				}
				s, err := engine.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := workload.Add(s, "netperf:n=32", ""); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				start := benchrun.CPUSeconds()
				s.RunUntil(20 * engine.Millisecond)
				ns := (benchrun.CPUSeconds() - start) * 1e9 / float64(max(s.Totals().Wakeups, 1))
				if err := s.Err(); err != nil {
					b.Fatal(err)
				}
				if best[i] == 0 || ns < best[i] {
					best[i] = ns
				}
			}
		}
	}
	if best[0] <= 0 {
		return
	}
	b.ReportMetric(best[0], "engine-ns/wakeup")
	b.ReportMetric(best[1]-best[0], "entry-ns")
	for i := 2; i < len(variants); i++ {
		b.ReportMetric((best[i]-best[1])/per[i], variants[i].name+"-ns")
	}
}
