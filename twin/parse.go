package twin

// Parsers of the real benchmarks' output. The layouts are the tools' own
// (tools/perf/bench/sched-pipe.c, sched-messaging.c and builtin-bench.c's
// "# Running '%s/%s' benchmark:"; schbench.c's show_latencies in its 2016,
// 2019 and 2023 generations); testdata/ holds captured and documented
// samples of each (see testdata/README.md).

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// PerfPipe is `perf bench sched pipe` output.
type PerfPipe struct {
	Loops      int64   // "# Executed N pipe operations" (0 when absent)
	Mode       string  // "processes" or "threads" ("" when absent)
	TotalS     float64 // "Total time: S [sec]" (millisecond resolution)
	UsecsPerOp float64 // "X usecs/op": one round trip
	OpsPerSec  float64 // "N ops/sec"
}

// PerfMessaging is `perf bench sched messaging` output.
type PerfMessaging struct {
	PerGroup int    // "# N sender and receiver <mode> per group"
	Groups   int    // "# G groups == T <mode> run"
	Tasks    int    // T
	Mode     string // "processes" or "threads"
	TotalS   float64
}

// Schbench is the wakeup-latency block of schbench's output: the last one
// printed (schbench may print one per interval, then the final one).
type Schbench struct {
	Layout   string // "2016" (50.0000th), "2019" (50.0th), "2023" (Wakeup Latencies …)
	P50, P99 float64
	Min, Max float64 // -1 when absent
	Samples  int64   // 2023 layout's total samples (0 when absent)
}

var (
	reExecuted  = regexp.MustCompile(`^#\s*Executed\s+(\d+)\s+pipe operations between two\s+(\w+)`)
	reTotal     = regexp.MustCompile(`^Total time:\s*([0-9.]+)\s*\[sec\]`)
	reUsecsOp   = regexp.MustCompile(`^([0-9.]+(?:[eE][-+]?\d+)?)\s+usecs/op\b`)
	reOpsSec    = regexp.MustCompile(`^([0-9.]+(?:[eE][-+]?\d+)?)\s+ops/sec\b`)
	rePerGroup  = regexp.MustCompile(`^#\s*(\d+)\s+sender and receiver\s+(\w+)\s+per group`)
	reGroups    = regexp.MustCompile(`^#\s*(\d+)\s+groups\s*==\s*(\d+)\s+(\w+)\s+run`)
	rePct       = regexp.MustCompile(`^\*?\s*(\d+(?:\.\d+)?)th:\s*(\d+)`)
	reMinMax    = regexp.MustCompile(`^min=(\d+),\s*max=(\d+)`)
	reWakeup23  = regexp.MustCompile(`^Wakeup Latencies percentiles \(usec\).*\((\d+) total samples\)`)
	reOther23   = regexp.MustCompile(`^(Request Latencies|RPS) percentiles`)
	reOldHeader = regexp.MustCompile(`^Latency percentiles \(usec\)`)
)

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	return out
}

func num(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// ParsePerfPipe reads `perf bench sched pipe` output (the default
// format). usecs/op and ops/sec must be there; a missing one is an error
// naming it.
func ParsePerfPipe(s string) (PerfPipe, error) {
	var p PerfPipe
	var haveUs, haveOps, haveTotal bool
	for _, l := range lines(s) {
		if m := reExecuted.FindStringSubmatch(l); m != nil {
			p.Loops, _ = strconv.ParseInt(m[1], 10, 64)
			p.Mode = m[2]
		} else if m := reTotal.FindStringSubmatch(l); m != nil {
			p.TotalS, haveTotal = num(m[1])
		} else if m := reUsecsOp.FindStringSubmatch(l); m != nil {
			p.UsecsPerOp, haveUs = num(m[1])
		} else if m := reOpsSec.FindStringSubmatch(l); m != nil {
			p.OpsPerSec, haveOps = num(m[1])
		}
	}
	var missing []string
	if !haveUs {
		missing = append(missing, `"usecs/op"`)
	}
	if !haveOps {
		missing = append(missing, `"ops/sec"`)
	}
	if len(missing) > 0 {
		return p, fmt.Errorf("perf bench sched pipe output has no %s line%s", strings.Join(missing, " or "), excerpt(s))
	}
	if !haveTotal && p.Loops > 0 {
		p.TotalS = p.UsecsPerOp * float64(p.Loops) / 1e6
	}
	return p, nil
}

// ParsePerfMessaging reads `perf bench sched messaging` output (the
// default format); the "Total time" line must be there.
func ParsePerfMessaging(s string) (PerfMessaging, error) {
	var p PerfMessaging
	have := false
	for _, l := range lines(s) {
		if m := rePerGroup.FindStringSubmatch(l); m != nil {
			p.PerGroup, _ = strconv.Atoi(m[1])
			p.Mode = m[2]
		} else if m := reGroups.FindStringSubmatch(l); m != nil {
			p.Groups, _ = strconv.Atoi(m[1])
			p.Tasks, _ = strconv.Atoi(m[2])
			p.Mode = m[3]
		} else if m := reTotal.FindStringSubmatch(l); m != nil {
			p.TotalS, have = num(m[1])
		}
	}
	if !have {
		return p, fmt.Errorf(`perf bench sched messaging output has no "Total time: S [sec]" line%s`, excerpt(s))
	}
	return p, nil
}

// ParseSchbench reads schbench's output (stderr and stdout together) and
// returns its last wakeup-latency block: "Latency percentiles (usec)"
// (2016-2022) or "Wakeup Latencies percentiles (usec)" (2023 on; the
// Request and RPS blocks are skipped). The block must give the 50th and
// 99th percentiles.
func ParseSchbench(s string) (Schbench, error) {
	var best *Schbench
	var cur *Schbench
	var have50, have99 bool
	flush := func() {
		if cur != nil && have50 && have99 {
			c := *cur
			best = &c
		}
		cur, have50, have99 = nil, false, false
	}
	for _, l := range lines(s) {
		switch {
		case reOldHeader.MatchString(l):
			flush()
			cur = &Schbench{Layout: "2019", Min: -1, Max: -1}
			continue
		case reWakeup23.MatchString(l):
			flush()
			m := reWakeup23.FindStringSubmatch(l)
			n, _ := strconv.ParseInt(m[1], 10, 64)
			cur = &Schbench{Layout: "2023", Min: -1, Max: -1, Samples: n}
			continue
		case reOther23.MatchString(l):
			flush()
			continue
		}
		if cur == nil {
			continue
		}
		if m := rePct.FindStringSubmatch(l); m != nil {
			pct, v := m[1], 0.0
			v, _ = num(m[2])
			if strings.Contains(pct, ".0000") && cur.Layout == "2019" {
				cur.Layout = "2016"
			}
			switch p, _ := num(pct); p {
			case 50:
				cur.P50, have50 = v, true
			case 99:
				cur.P99, have99 = v, true
			}
			continue
		}
		if m := reMinMax.FindStringSubmatch(l); m != nil {
			cur.Min, _ = num(m[1])
			cur.Max, _ = num(m[2])
			flush()
		}
	}
	flush()
	if best == nil {
		return Schbench{}, fmt.Errorf(`schbench output has no wakeup latency block with its 50th and 99th percentiles ("Latency percentiles (usec)" or "Wakeup Latencies percentiles (usec)")%s`, excerpt(s))
	}
	return *best, nil
}

// excerpt quotes the start of s for an error message.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return " (the output is empty)"
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return ":\n" + s
}
