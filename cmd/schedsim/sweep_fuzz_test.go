package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"schedplay/engine/knob"
	"schedplay/scenario"
)

// FuzzSweepVary: any --vary flags give a plan or a usage error naming
// the flag, never a panic; a plan's points are all different (a knob or
// key named twice, or a value given twice, once made a sweep run the same
// point more than once, which merge then refused) and as many as the
// product of the values, within MaxSweepRuns. Each line of the input is
// one --vary.
func FuzzSweepVary(f *testing.F) {
	for _, seed := range []string{
		"SIS_CORE=true,false",
		"SIS_CORE=true,false\nSIS_CORE=false", // the audit's: the second replaced the first
		"SIS_CORE=true,true",                  // the audit's: duplicate points, refused by merge
		"SIS_CORE=true,1",
		"workload.t=2,4\nworkload1.t=8",
		"SIS_CORE=true,false\nworkload.t=2,4\nsched_latency_ns=1000000,2000000",
		"era=5.2,6.6",
		"sis_core=on,off",
	} {
		f.Add(seed)
	}
	var base sweepFlags
	fs := sweepFlagSet(&base)
	if err := fs.Parse([]string{smallRun, "--workload", "schbench:m=1,t=2", "--seeds", "1"}); err != nil {
		f.Fatal(err)
	}
	base.runs = 1
	cfg, err := base.config()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fl := base
		fl.varies = nil
		for _, v := range strings.Split(in, "\n") {
			fl.varies = append(fl.varies, v)
		}
		plan, err := fl.planSweep(cfg)
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--") && !strings.HasPrefix(err.Error(), "sweep: ") {
				t.Fatalf("%q: error %v is not a usage error naming a flag", in, err)
			}
			return
		}
		if plan.runs > MaxSweepRuns || plan.runs != plan.points*plan.seeds {
			t.Fatalf("%q: %d runs of %d points", in, plan.runs, plan.points)
		}
		want := 1
		for _, ax := range plan.axes {
			want *= len(ax.values)
		}
		if plan.points != want || plan.points > 4096 {
			return // big plans: not enumerated here
		}
		seen := map[string]int{}
		for i := 0; i < plan.points; i++ {
			pt := canonicalPoint(t, &fl, cfg, plan.point(i))
			if j, dup := seen[pt]; dup {
				t.Fatalf("%q: points %d and %d are both %s", in, j, i, pt)
			}
			seen[pt] = i
		}
	})
}

// canonicalPoint is a point as the run sees it: each axis by the name it
// is known by, each knob value as the knob reads it (true and 1 alike).
func canonicalPoint(t *testing.T, f *sweepFlags, cfg scenario.Config, pt map[string]string) string {
	out := map[string]string{}
	for name, v := range pt {
		id, err := f.axisID(cfg, name)
		if err != nil {
			t.Fatalf("axis %q of an accepted plan: %v", name, err)
		}
		if k, ok := knob.Lookup(name); ok {
			if x, err := knob.ByID(k).Parse(v); err == nil {
				v = strconv.FormatInt(x, 10)
			}
		}
		out[id] = v
	}
	return pointString(out)
}
