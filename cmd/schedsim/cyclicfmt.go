package main

// cyclictest's outputs, for --format cyclictest and cyclictest-json: the
// layouts of rt-tests 2.4 (src/cyclictest/cyclictest.c print_stat's
// "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld"
// line, as `cyclictest -q` prints it at the end; src/lib/rt-utils.c
// rt_write_json and cyclictest's write_stats for --json=FILE). Checked
// against the real cyclictest's output in cyclicfmt_test.go.

import (
	"fmt"
	"io"
	"math"
	"strings"

	json "github.com/goccy/go-json"

	"schedplay/scenario"
)

// writeCyclictest prints a cyclictest workload's threads as `cyclictest
// -q` does when it ends: the latency-target line (none with latency=-1,
// as with --laptop), then one line per
// thread. The thread's pid is its task id (schedplay's tid); P is its
// rt priority (0 for SCHED_OTHER); Avg is rounded as cyclictest's
// integer division does (truncated).
func writeCyclictest(w io.Writer, wo scenario.WorkloadOut, latencyUS int64) {
	if latencyUS >= 0 {
		fmt.Fprintf(w, cyclictestLatencyLine+"\n", latencyUS)
	}
	for k, th := range wo.Threads {
		fmt.Fprintf(w, cyclictestThreadLine+"\n",
			k, th.TID, th.RTPrio, th.IntervalUS, th.Cycles, th.MinUS, th.ActUS, int64(th.AvgUS), th.MaxUS)
	}
}

// cyclictestLatencyLine is what cyclictest prints once it holds
// /dev/cpu_dma_latency at 0 (set_latency_target); cyclictestThreadLine is
// print_stat's per-thread line.
const (
	cyclictestLatencyLine = "# /dev/cpu_dma_latency set to %dus"
	cyclictestThreadLine  = "T:%2d (%5d) P:%2d I:%d C:%7d Min:%7d Act:%5d Avg:%5d Max:%8d"
)

// writeCyclictestJSON writes what `cyclictest --json=FILE` writes: the
// rt-tests header (file_version 1, the command line, the version, the
// times, return_code, sysinfo) and the threads' cycles, min, max, avg,
// cpu and node. Times and sysinfo describe the simulated run.
func writeCyclictestJSON(w io.Writer, spec string, wo scenario.WorkloadOut, r *scenario.Result) error {
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			return `""`
		}
		return string(b)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"file_version\": 1,\n")
	fmt.Fprintf(&b, "  \"cmdline:\": %s,\n", q("schedsim run --workload "+spec))
	fmt.Fprintf(&b, "  \"rt_test_version:\": %s,\n", q("schedplay (cyclictest 2.40 output)"))
	fmt.Fprintf(&b, "  \"start_time\": %s,\n  \"end_time\": %s,\n", q("simulated 0 s"), q(fmt.Sprintf("simulated %.6g s", r.DurationS)))
	fmt.Fprintf(&b, "  \"return_code\": 0,\n")
	fmt.Fprintf(&b, "  \"sysinfo\": {\n    \"sysname\": \"schedplay\",\n    \"nodename\": %s,\n    \"release\": %s,\n    \"version\": %s,\n    \"machine\": %s,\n    \"realtime\": 0\n  },\n",
		q(r.Preset), q(fmt.Sprint(r.Knobs["era"])), q(fmt.Sprintf("seed %d", r.Seed)), q(r.Machine))
	fmt.Fprintf(&b, "  \"num_threads\": %d,\n  \"resolution_in_ns\": 0,\n  \"thread\": {\n", len(wo.Threads))
	for k, th := range wo.Threads {
		sep := ","
		if k == len(wo.Threads)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    \"%d\": {\n      \"histogram\": {},\n      \"cycles\": %d,\n      \"min\": %d,\n      \"max\": %d,\n      \"avg\": %.2f,\n      \"cpu\": %d,\n      \"node\": 0\n    }%s\n",
			k, th.Cycles, th.MinUS, th.MaxUS, math.Round(th.AvgUS*100)/100, th.CPU, sep)
	}
	b.WriteString("  }\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
