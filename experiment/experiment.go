// Package experiment runs the validation experiments of presets/experiments
// (validation.md V1–V6): every arm over the same seeds, the seed figures
// beside the simulated ones, and PASS/FAIL for each check.
package experiment

import (
	"fmt"
	"math"
	"strings"

	"schedplay/engine"
	"schedplay/engine/workload"
	"schedplay/presets"
	"schedplay/scenario"
)

// ArmResult is one arm's per-seed results.
type ArmResult struct {
	Arm     presets.Arm
	Machine string
	Results []*scenario.Result
}

// RowOut is one line of the side-by-side table.
type RowOut struct {
	Label string   `json:"label"`
	Seed  *float64 `json:"seed"`
	Sim   string   `json:"sim"`
	Mean  float64  `json:"mean"`
	Stdev float64  `json:"stdev"`
	Err   string   `json:"error,omitempty"`
}

// CheckOut is one evaluated check.
type CheckOut struct {
	Rule   string  `json:"rule"`
	Value  float64 `json:"value"`
	Pass   bool    `json:"pass"`
	Detail string  `json:"detail"`
	// KnownAtSize is set on a failed check that the run's reduced size
	// is known not to reproduce (presets.Size.KnownFail): why.
	KnownAtSize string `json:"known_at_size,omitempty"`
	// Pending: an arm it needs has no results yet (Evaluate on a partial
	// run).
	Pending bool `json:"pending,omitempty"`
}

// Outcome is a finished experiment.
type Outcome struct {
	Name      string              `json:"name"`
	Target    string              `json:"target"`
	Title     string              `json:"title"`
	Source    string              `json:"source"`
	Seeds     int                 `json:"seeds"`
	DurationS float64             `json:"duration_s"`
	Rows      []RowOut            `json:"rows"`
	Checks    []CheckOut          `json:"checks"`
	Pass      bool                `json:"pass"`
	KnownFail string              `json:"known_fail,omitempty"`
	Arms      map[string]*ArmJSON `json:"arms"`
	arms      map[string]*ArmResult
}

// ArmJSON summarises an arm for the JSON output.
type ArmJSON struct {
	Label     string            `json:"label"`
	Machine   string            `json:"machine"`
	Workloads []string          `json:"workloads"`
	Knobs     map[string]string `json:"knobs"`
}

// Config returns the scenario config of arm a of e (seed 1).
func Config(e *presets.Experiment, i int, size presets.Size) scenario.Config {
	m, wl, knobs := e.ArmSetup(i)
	var sets []string
	for _, k := range sortedKeys(knobs) {
		sets = append(sets, k+"="+knobs[k])
	}
	d := e.Arms[i].DurationS
	if d == 0 {
		d = e.DurationS
	}
	if size.DurationS > 0 {
		d = min(d, size.DurationS)
	}
	if len(size.Workload) > 0 {
		scaled := make([]string, len(wl))
		for j, w := range wl {
			s, err := workload.WithKeys(w, size.Workload)
			if err != nil {
				s = w // a bad spec is reported when the arm is built
			}
			scaled[j] = s
		}
		wl = scaled
	}
	return scenario.Config{Preset: m, Workloads: wl, Knobs: sets, Seed: 1, Duration: int64(d * float64(engine.Second))}
}

// Run runs every arm of e with the given size (zero fields: the
// experiment's full size) and evaluates rows and checks. progress, if not
// nil, is told about each arm as it starts.
func Run(e *presets.Experiment, size presets.Size, progress func(string)) (*Outcome, error) {
	seeds := e.Seeds
	if size.Seeds > 0 {
		seeds = size.Seeds
	}
	results := map[string][]*scenario.Result{}
	for i, a := range e.Arms {
		cfg := Config(e, i, size)
		if progress != nil {
			progress(fmt.Sprintf("%s: arm %s (%s) on %s, %d seeds", e.Name, a.Name, a.Label, cfg.Preset, seeds))
		}
		res, err := scenario.RunMany(cfg, seeds)
		if err != nil {
			return nil, fmt.Errorf("%s arm %s: %v", e.Name, a.Name, err)
		}
		results[a.Name] = res
	}
	return Evaluate(e, size, results), nil
}

// Evaluate fills in e's rows and checks from per-arm results (arm name →
// one result per seed), as Run does after running the arms. The page
// calls it with what has run so far: an arm without results leaves its
// rows with an error and its checks pending.
func Evaluate(e *presets.Experiment, size presets.Size, results map[string][]*scenario.Result) *Outcome {
	seeds := e.Seeds
	if size.Seeds > 0 {
		seeds = size.Seeds
	}
	dur := e.DurationS
	if size.DurationS > 0 {
		dur = min(dur, size.DurationS)
	}
	o := &Outcome{Name: e.Name, Target: e.Target, Title: e.Title, Source: e.Source, Seeds: seeds, DurationS: dur,
		KnownFail: e.KnownFail, arms: map[string]*ArmResult{}, Arms: map[string]*ArmJSON{}}
	for i, a := range e.Arms {
		res := results[a.Name]
		if len(res) == 0 {
			continue
		}
		cfg := Config(e, i, size)
		o.arms[a.Name] = &ArmResult{Arm: a, Machine: cfg.Preset, Results: res}
		_, _, knobs := e.ArmSetup(i)
		o.Arms[a.Name] = &ArmJSON{Label: a.Label, Machine: cfg.Preset, Workloads: cfg.Workloads, Knobs: knobs}
	}
	for _, r := range e.Rows {
		ro := RowOut{Label: r.Label, Seed: r.Seed, Sim: r.Sim}
		if m, sd, err := o.Metric(r.Sim); err != nil {
			ro.Err = err.Error()
		} else {
			ro.Mean, ro.Stdev = round(m, 3), round(sd, 3)
		}
		o.Rows = append(o.Rows, ro)
	}
	o.Pass = true
	for _, c := range e.Checks {
		co := o.evaluate(c)
		if why, known := size.KnownFail[c.Rule]; known && !co.Pass {
			co.KnownAtSize = why
		} else if !co.Pass {
			o.Pass = false
		}
		o.Checks = append(o.Checks, co)
	}
	return o
}

// Metric returns the mean and sample stdev over seeds of a metric
// reference (for *_max fields, the maximum over seeds and 0).
func (o *Outcome) Metric(ref string) (float64, float64, error) {
	r, err := presets.ParseMetricRef(ref)
	if err != nil {
		return 0, 0, err
	}
	arm := o.arms[r.Arm]
	if arm == nil {
		return 0, 0, fmt.Errorf("arm %s has not run", r.Arm)
	}
	var xs []float64
	for _, res := range arm.Results {
		v, err := field(res, r)
		if err != nil {
			return 0, 0, fmt.Errorf("%s (seed %d): %v", ref, res.Seed, err)
		}
		xs = append(xs, v)
	}
	if strings.HasSuffix(r.Field, "_max") {
		m := math.Inf(-1)
		for _, x := range xs {
			m = max(m, x)
		}
		return m, 0, nil
	}
	mean, sd := scenario.MeanStdev(xs)
	return mean, sd, nil
}

func field(res *scenario.Result, r presets.MetricRef) (float64, error) {
	if r.Workload >= len(res.Workloads) {
		return 0, fmt.Errorf("arm has %d workloads, no workload %d", len(res.Workloads), r.Workload)
	}
	w := res.Workloads[r.Workload]
	l := w.WakeupLatencyUS
	switch r.Field {
	case "p50":
		return float64(l.P50), nil
	case "p75":
		return float64(l.P75), nil
	case "p90":
		return float64(l.P90), nil
	case "p95":
		return float64(l.P95), nil
	case "p99":
		return float64(l.P99), nil
	case "p99_5":
		return float64(l.P995), nil
	case "p99_9":
		return float64(l.P999), nil
	case "min":
		return float64(l.Min), nil
	case "max":
		return float64(l.Max), nil
	case "count":
		return float64(l.Count), nil
	case "ops_s", "us_per_op":
		if w.ThroughputOpsS == nil || *w.ThroughputOpsS == 0 {
			return 0, fmt.Errorf("workload %s counted no operations", w.Name)
		}
		if r.Field == "us_per_op" {
			return 1e6 / *w.ThroughputOpsS, nil
		}
		return *w.ThroughputOpsS, nil
	case "completion_s":
		if w.CompletionS == nil {
			return 0, fmt.Errorf("workload %s did not finish within %.3g s", w.Name, res.DurationS)
		}
		return *w.CompletionS, nil
	case "req_p50", "req_p99", "req_p50_s":
		if w.RequestLatencyUS == nil {
			return 0, fmt.Errorf("workload %s records no request latency", w.Name)
		}
		switch r.Field {
		case "req_p50":
			return float64(w.RequestLatencyUS.P50), nil
		case "req_p50_s":
			// In seconds: hackbench's one sample is the Time it prints.
			return float64(w.RequestLatencyUS.P50) / 1e6, nil
		}
		return float64(w.RequestLatencyUS.P99), nil
	case "probes_mean":
		return res.Search.ProbesMean, nil
	case "probes_max":
		return float64(res.Search.ProbesMax), nil
	case "placed_busy_pct":
		return res.Search.PlacedBusyPct, nil
	case "placement_cv":
		return res.Search.PlacementCV, nil
	case "sis_calls":
		return float64(res.Search.SelectIdleCPUCalls), nil
	case "cpu_busy_pct":
		return res.CPUBusyPct, nil
	case "lock_wait_ms":
		return float64(res.SharedRunq.LockWaitNS) / 1e6, nil
	case "probes_per_wakeup":
		return res.Search.ProbesPerWakeup, nil
	case "migrations":
		m := res.Migrations
		return float64(m.SMT + m.LLC + m.CrossLLC + m.CrossSocket), nil
	case "ctx_switches":
		return float64(res.Balance.CtxSwitches), nil
	case "delayed", "delayed_requeued", "delayed_dequeued", "delayed_migrated", "delayed_requeue_pct":
		d := res.Delayed
		if d == nil {
			era, _ := res.Knobs["era"].(string)
			return 0, fmt.Errorf("era %s has no delayed dequeue (DELAY_DEQUEUE is a 6.12 feature)", era)
		}
		switch r.Field {
		case "delayed":
			return float64(d.Delayed), nil
		case "delayed_requeued":
			return float64(d.Requeued), nil
		case "delayed_dequeued":
			return float64(d.Dequeued), nil
		case "delayed_migrated":
			return float64(d.Migrated), nil
		}
		if res.Search.Wakeups == 0 {
			return 0, fmt.Errorf("no wakeups")
		}
		return 100 * float64(d.Requeued) / float64(res.Search.Wakeups), nil
	case "rt_cpu_pct", "fair_cpu_pct", "rt_throttles":
		rt := res.RT
		if rt == nil {
			return 0, fmt.Errorf("the run has no RT task (policy=fifo|rr)")
		}
		switch r.Field {
		case "rt_cpu_pct":
			return rt.CPUPct, nil
		case "fair_cpu_pct":
			return res.CPUBusyPct - rt.CPUPct, nil
		}
		return float64(rt.Throttles), nil
	case "migrations_cross_llc":
		// Every migration that leaves the LLC: to another LLC of the
		// socket or to the other socket.
		return float64(res.Migrations.CrossLLC + res.Migrations.CrossSocket), nil
	}
	return 0, fmt.Errorf("unknown field %q", r.Field)
}

func (o *Outcome) evaluate(c presets.Check) CheckOut {
	co := CheckOut{Rule: c.Rule}
	for _, ref := range []string{c.A, c.B} {
		if r, err := presets.ParseMetricRef(ref); err == nil && ref != "" && o.arms[r.Arm] == nil {
			co.Pending = true
			co.Detail = fmt.Sprintf("waiting for arm %s", r.Arm)
			return co
		}
	}
	a, _, err := o.Metric(c.A)
	if err != nil {
		co.Detail = err.Error()
		return co
	}
	var v float64
	switch c.Kind {
	case "range":
		v = a
		co.Detail = fmt.Sprintf("%s = %.4g", c.A, a)
	case "ratio", "within":
		b, _, err := o.Metric(c.B)
		if err != nil {
			co.Detail = err.Error()
			return co
		}
		if b == 0 {
			co.Detail = fmt.Sprintf("%s is 0", c.B)
			return co
		}
		v = a / b
		co.Detail = fmt.Sprintf("%s / %s = %.4g / %.4g = %.3f", c.A, c.B, a, b, v)
	}
	co.Value = round(v, 4)
	switch c.Kind {
	case "within":
		co.Pass = math.Abs(v-1)*100 <= *c.Pct
	default:
		co.Pass = (c.Min == nil || v >= *c.Min) && (c.Max == nil || v <= *c.Max)
	}
	return co
}

func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
