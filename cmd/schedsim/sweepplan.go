package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"schedplay/engine/field"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/scenario"
)

// MaxSweepRuns caps a sweep's runs (points × seeds, all shards
// together). Nothing is planned per run in memory, but merge keeps one
// key per run, and a sweep this large is a cluster's week: past the cap
// the sweep is refused before anything runs, with the count.
const MaxSweepRuns = 1 << 20

// sweepPlan is a sweep's runs, numbered k = point×seeds + seed offset,
// the first --vary varying slowest: run k's point and seed are computed
// from k, never held in a list (100 M runs once reached 7 GB).
type sweepPlan struct {
	axes   []vary
	seeds  int
	seed0  uint64
	points int
	runs   int
}

// planSweep checks the --vary axes (each name once, each value once, as
// the knob or workload key reads it) and counts the runs against
// MaxSweepRuns. Points are checked by checkPoints.
func (f *sweepFlags) planSweep(base scenario.Config) (*sweepPlan, error) {
	p := &sweepPlan{seeds: f.seeds, seed0: f.seed, points: 1}
	given := map[string]string{} // axis → the --vary that named it
	for _, v := range f.varies {
		name, vals, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(vals) == "" {
			return nil, usagef("--vary %q: want NAME=a,b,... (a knob, or workload.KEY)", v)
		}
		ax := vary{name: strings.TrimSpace(name)}
		for _, x := range strings.Split(vals, ",") {
			ax.values = append(ax.values, strings.TrimSpace(x))
		}
		id, err := f.axisID(base, ax.name)
		if err != nil {
			return nil, err
		}
		if prev, dup := given[id]; dup {
			return nil, usagef("--vary %s and --vary %s both vary %s: put all its values in one --vary (two would run only the last one's)", prev, v, id)
		}
		given[id] = v
		if err := f.distinctValues(base, ax); err != nil {
			return nil, err
		}
		if p.points > MaxSweepRuns/len(ax.values) {
			return nil, f.tooMany()
		}
		p.points *= len(ax.values)
		p.axes = append(p.axes, ax)
	}
	for _, set := range base.Knobs {
		name, _, _ := strings.Cut(set, "=")
		if id, ok := knob.Lookup(strings.TrimSpace(name)); ok {
			if v, dup := given[knob.ByID(id).Name]; dup {
				return nil, usagef("--set %s and --vary %s both set knob %s: drop one (the --vary would win silently)", set, v, knob.ByID(id).Name)
			}
		}
	}
	if p.points > MaxSweepRuns/p.seeds {
		return nil, f.tooMany()
	}
	p.runs = p.points * p.seeds
	if p.seed0 > ^uint64(0)-uint64(p.seeds-1) {
		return nil, usagef("--seed %d with --seeds %d: the seeds would pass %d (2^64-1)", p.seed0, p.seeds, ^uint64(0))
	}
	return p, nil
}

// tooMany is the refusal of a sweep over MaxSweepRuns.
func (f *sweepFlags) tooMany() error {
	total := 1
	var parts []string
	for _, v := range f.varies {
		name, vals, _ := strings.Cut(v, "=")
		n := len(strings.Split(vals, ","))
		parts = append(parts, fmt.Sprintf("%d %s", n, strings.TrimSpace(name)))
		total = satMul(total, n)
	}
	total = satMul(total, f.seeds)
	return usagef("sweep: %s × %d seeds = %s runs, more than a sweep may hold (%d); vary fewer values or split it into several sweeps",
		strings.Join(parts, " × "), f.seeds, groupDigits(total), MaxSweepRuns)
}

// satMul is a×b, saturating at the largest int.
func satMul(a, b int) int {
	if a != 0 && b > int(^uint(0)>>1)/a {
		return int(^uint(0) >> 1)
	}
	return a * b
}

// groupDigits writes n with thousands separators: 100,000,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// axisID is the name an axis is known by, whatever its spelling: a
// knob's own name (SIS_CORE for sis_core), "workload1.KEY" for
// workload.KEY.
func (f *sweepFlags) axisID(base scenario.Config, name string) (string, error) {
	head, key, isWL := strings.Cut(name, ".")
	if isWL && strings.HasPrefix(head, "workload") {
		idx := 1
		if n := strings.TrimPrefix(head, "workload"); n != "" {
			i, err := field.Int("--vary "+name, n, 1, int64(len(base.Workloads)))
			if err != nil {
				return "", usagef("%v", err)
			}
			idx = int(i)
		}
		return fmt.Sprintf("workload%d.%s", idx, key), nil
	}
	if id, ok := knob.Lookup(name); ok {
		return knob.ByID(id).Name, nil
	}
	return name, nil // unknown: pointConfig names it with the knobs allowed
}

// distinctValues refuses a value given twice in one axis (SIS_CORE=true,true
// or true,1): the duplicate runs would be the same runs twice, and merge
// refuses them as overlapping shards.
func (f *sweepFlags) distinctValues(base scenario.Config, ax vary) error {
	seen := map[string]string{}
	for _, x := range ax.values {
		key := x
		if id, ok := knob.Lookup(ax.name); ok {
			if v, err := knob.ByID(id).Parse(x); err == nil {
				key = strconv.FormatInt(v, 10)
			}
		}
		if prev, dup := seen[key]; dup {
			what := fmt.Sprintf("value %s given twice", x)
			if prev != x {
				what = fmt.Sprintf("values %s and %s are the same", prev, x)
			}
			return usagef("--vary %s: %s; each value once (a repeated value runs the same point twice)", ax.name, what)
		}
		seen[key] = x
	}
	return nil
}

// point returns point i's values (axis name → value).
func (p *sweepPlan) point(i int) map[string]string {
	pt := make(map[string]string, len(p.axes))
	for a := len(p.axes) - 1; a >= 0; a-- {
		n := len(p.axes[a].values)
		pt[p.axes[a].name] = p.axes[a].values[i%n]
		i /= n
	}
	return pt
}

// inShard reports whether some run of point i belongs to shard I of N.
func (p *sweepPlan) inShard(i, shardI, shardN int) bool {
	if p.seeds >= shardN {
		return true
	}
	for s := 0; s < p.seeds; s++ {
		if (i*p.seeds+s)%shardN == shardI-1 {
			return true
		}
	}
	return false
}

// checkPoints checks every point the shard runs before anything runs,
// stopping when ctx ends (Ctrl-C). Checking a point reads its knobs and
// workloads, not its machine (the same for every point): a million
// points take about a minute, and past a second the count goes to
// stderr. The configs are not kept (runConfig makes each again).
func (f *sweepFlags) checkPoints(ctx context.Context, p *sweepPlan, base scenario.Config, shardI, shardN int, stderr io.Writer) error {
	start, shown := time.Now(), time.Time{}
	for i := 0; i < p.points; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return &interruptedError{fmt.Sprintf("interrupted while checking the points (%d of %d checked); nothing ran", i, p.points)}
			}
			if time.Since(start) > time.Second && time.Since(shown) > 5*time.Second {
				fmt.Fprintf(stderr, "sweep: checking the points: %d of %d\n", i, p.points)
				shown = time.Now()
			}
		}
		if !p.inShard(i, shardI, shardN) {
			continue
		}
		if _, err := f.pointConfig(base, p.axes, p.point(i)); err != nil {
			return err
		}
	}
	return nil
}

// runLine is run k's line before it runs: its point, seed and config.
func (f *sweepFlags) runLine(p *sweepPlan, base scenario.Config, k int) (*sweepLine, error) {
	pi := k / p.seeds
	pt := p.point(pi)
	cfg, err := f.pointConfig(base, p.axes, pt)
	if err != nil {
		return nil, err
	}
	path, pol := f.runPolicy(pt)
	return &sweepLine{Index: k, Point: pt, Seed: p.seed0 + uint64(k%p.seeds), Preset: cfg.Preset,
		Knobs: cfg.Knobs, Specs: cfg.Workloads, DurS: float64(cfg.Duration) / 1e9, Policy: path, PolicySum: pol.sum}, nil
}

// pointConfig applies one point's values to the base config: knobs are
// appended to --set, workload keys replace or add the key in the spec.
// The machine is the base's (checked once): only knobs and workloads are
// checked here.
func (f *sweepFlags) pointConfig(base scenario.Config, vs []vary, pt map[string]string) (scenario.Config, error) {
	cfg := base
	cfg.Knobs = append([]string(nil), base.Knobs...)
	cfg.Workloads = append([]string(nil), base.Workloads...)
	for _, v := range vs {
		val := pt[v.name]
		if v.name == policyAxis {
			continue // the run's policy: runPolicy
		}
		head, key, isWL := strings.Cut(v.name, ".")
		if isWL && strings.HasPrefix(head, "workload") {
			idx := 1
			if n := strings.TrimPrefix(head, "workload"); n != "" {
				i, err := field.Int("--vary "+v.name, n, 1, int64(len(cfg.Workloads)))
				if err != nil {
					return cfg, usagef("%v", err)
				}
				idx = int(i)
			}
			sp, err := workload.Parse(cfg.Workloads[idx-1])
			if err != nil {
				return cfg, usagef("--vary %s: %v", v.name, err)
			}
			set := false
			for i := range sp.Params {
				if sp.Params[i].Key == key {
					sp.Params[i].Value, set = val, true
				}
			}
			if !set {
				sp.Params = append(sp.Params, workload.Param{Key: key, Value: val})
			}
			cfg.Workloads[idx-1] = sp.String()
			if err := workload.Check(sp.String(), f.ncpu); err != nil {
				_, msg, _ := splitWorkloadError(err.Error())
				return cfg, usagef("--vary %s=%s: %s", v.name, val, msg)
			}
			continue
		}
		kv := v.name + "=" + val
		if _, err := scenario.KnobValues(f.spec, []string{kv}); err != nil {
			return cfg, usagef("--vary %s: %v", kv, err)
		}
		cfg.Knobs = append(cfg.Knobs, kv)
	}
	if _, err := scenario.KnobValues(f.spec, cfg.Knobs); err != nil {
		return cfg, usagef("--vary point %v: %v", pt, err)
	}
	for _, w := range cfg.Workloads {
		if err := workload.Check(w, f.ncpu); err != nil {
			return cfg, usagef("--vary point %v: %v", pt, err)
		}
	}
	return cfg, nil
}
