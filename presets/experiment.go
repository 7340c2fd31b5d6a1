package presets

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"schedplay/internal/json"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
)

// Experiment is a validation experiment: one or more arms (machine,
// workloads, knobs) run over the same seeds, the seed figures it
// reproduces, and the checks of validation.md that decide PASS or FAIL.
type Experiment struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"` // "experiment"
	Title  string   `json:"title"`
	Target string   `json:"target"` // validation.md id, e.g. "V1"
	Source string   `json:"source"`
	Notes  []string `json:"notes"`
	// Machine, Workloads, Knobs and DurationS are the defaults of every arm.
	Machine   string            `json:"machine"`
	Workloads []string          `json:"workloads"`
	Knobs     map[string]string `json:"knobs"`
	DurationS float64           `json:"duration_s"`
	// Seeds is how many seeds (1..Seeds) every arm runs.
	Seeds int `json:"seeds"`
	// Quick is the reduced size `make test` uses.
	Quick Size  `json:"quick"`
	Arms  []Arm `json:"arms"`
	Rows  []Row `json:"rows"`
	// Checks decide PASS/FAIL.
	Checks []Check `json:"checks"`
	// KnownFail, when set, is the diagnosis of a target that does not
	// reproduce after honest modelling; its checks are still run and
	// printed, but do not fail `reproduce`.
	KnownFail string `json:"known_fail"`
}

// Size is a duration and seed count, and workload keys to override (the
// quick size of an experiment may run fewer loops of the same tool).
type Size struct {
	DurationS float64           `json:"duration_s"`
	Seeds     int               `json:"seeds"`
	Workload  map[string]string `json:"workload"`
	// KnownFail maps the rule of a check that holds at full size but not
	// at this reduced size to why (a transient the short run cannot
	// outgrow, say). Such a check is run and printed, and does not fail
	// the reduced run; every other check still does.
	KnownFail map[string]string `json:"known_fail"`
}

// Arm is one configuration of an experiment; empty fields take the
// experiment's defaults, Knobs are added to the experiment's.
type Arm struct {
	Name      string            `json:"name"`
	Label     string            `json:"label"`
	Machine   string            `json:"machine"`
	Workloads []string          `json:"workloads"`
	Knobs     map[string]string `json:"knobs"`
	DurationS float64           `json:"duration_s"`
}

// Row is one line of the side-by-side table: the seed's figure and the
// simulated metric it corresponds to.
type Row struct {
	Label string   `json:"label"`
	Seed  *float64 `json:"seed"`
	Sim   string   `json:"sim"`
}

// Check is one pass rule. Kinds:
//   - "ratio": A/B within [min, max] (either bound may be omitted);
//   - "range": A within [min, max];
//   - "within": |A/B - 1| ≤ pct/100.
type Check struct {
	Rule string   `json:"rule"` // the rule as validation.md states it
	Kind string   `json:"kind"`
	A    string   `json:"a"`
	B    string   `json:"b"`
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
	Pct  *float64 `json:"pct"`
}

// ArmSetup returns what arm i runs: its machine, workloads and knob
// settings, with the experiment's defaults filled in (arm knobs override
// the experiment's).
func (e *Experiment) ArmSetup(i int) (machine string, workloads []string, knobs map[string]string) {
	a := e.Arms[i]
	machine = a.Machine
	if machine == "" {
		machine = e.Machine
	}
	workloads = a.Workloads
	if len(workloads) == 0 {
		workloads = e.Workloads
	}
	knobs = map[string]string{}
	for k, v := range e.Knobs {
		knobs[k] = v
	}
	for k, v := range a.Knobs {
		knobs[k] = v
	}
	return machine, append([]string(nil), workloads...), knobs
}

// MetricFields are the names a metric reference may use after the colon.
var MetricFields = []string{
	"p50", "p75", "p90", "p95", "p99", "p99_5", "p99_9", "min", "max", "count",
	"ops_s", "us_per_op", "completion_s", "req_p50", "req_p99", "req_p50_s",
	"probes_mean", "probes_max", "placed_busy_pct", "placement_cv", "sis_calls",
	"cpu_busy_pct", "lock_wait_ms",
	"probes_per_wakeup", "migrations", "migrations_cross_llc", "ctx_switches",
	// Era 6.12's delayed dequeue (scenario.Result's delayed_dequeue; an
	// error in an era without DELAY_DEQUEUE): sleeps kept queued, of
	// those woken in place (ttwu_runnable, no select_task_rq), dequeued
	// by a pick, moved while delayed, and the share of all wakeups that
	// were requeues.
	"delayed", "delayed_requeued", "delayed_dequeued", "delayed_migrated", "delayed_requeue_pct",
	// The RT class (scenario.Result's rt; an error in a run without an
	// RT task): the RT tasks' share of all CPU time, the fair (and
	// other non-RT) tasks' share (cpu_busy_pct minus it), and how often
	// an RT runqueue was throttled.
	"rt_cpu_pct", "fair_cpu_pct", "rt_throttles",
}

// metricRef is ARM[/WORKLOAD]:FIELD, e.g. "C:p99" or "HT/0:completion_s".
// armNameRE is an arm's name, compiled once rather than per arm.
var armNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

var metricRef = regexp.MustCompile(`^([A-Za-z0-9_.-]+)(?:/([0-9]+))?:([a-z0-9_]+)$`)

// MetricRef is a parsed metric reference.
type MetricRef struct {
	Arm      string
	Workload int
	Field    string
}

// ParseMetricRef parses ARM[/WORKLOAD]:FIELD.
func ParseMetricRef(s string) (MetricRef, error) {
	m := metricRef.FindStringSubmatch(s)
	if m == nil {
		return MetricRef{}, fmt.Errorf("metric %q is not ARM[/WORKLOAD]:FIELD", s)
	}
	r := MetricRef{Arm: m[1], Field: m[3]}
	if m[2] != "" {
		fmt.Sscan(m[2], &r.Workload)
	}
	for _, f := range MetricFields {
		if f == r.Field {
			return r, nil
		}
	}
	return r, fmt.Errorf("metric %q: unknown field %q (valid: %s)", s, r.Field, strings.Join(MetricFields, ", "))
}

var experimentShape = reflect.TypeOf(Experiment{})

const experimentDir = "experiments"

// Limits on an experiment, so a hostile one cannot run forever.
const (
	MaxArms      = 64
	MaxSeeds     = 100
	MaxDurationS = 3600
)

// ParseExperiment reads one experiment preset with the same strict checks
// as machines: unknown fields, wrong types, unknown machines, knobs, arms
// and metric fields are errors naming the field.
func ParseExperiment(data []byte, source string) (*Experiment, error) {
	if source == "" {
		source = PasteSource
	}
	fail := func(err error) (*Experiment, error) { return nil, &Error{source, err} }
	tree, err := decodeDocument(data)
	if err != nil {
		return fail(err)
	}
	if err := checkShape(tree, experimentShape, ""); err != nil {
		return fail(err)
	}
	var e Experiment
	if err := json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &e); err != nil {
		return fail(&machine.FieldError{Field: "(document)", Value: "an experiment preset", Allowed: err.Error()})
	}
	if err := checkExperiment(&e); err != nil {
		return fail(err)
	}
	return &e, nil
}

func checkExperiment(e *Experiment) error {
	fe := func(field string, v any, allowed string) error {
		return &machine.FieldError{Field: field, Value: v, Allowed: allowed}
	}
	if err := checkName(e.Name); err != nil {
		return err
	}
	if e.Kind != KindExperiment {
		return fe("kind", fmt.Sprintf("%q", e.Kind), fmt.Sprintf("%q", KindExperiment))
	}
	if e.Seeds < 1 || e.Seeds > MaxSeeds {
		return fe("seeds", e.Seeds, fmt.Sprintf("1..%d", MaxSeeds))
	}
	if e.Quick.Seeds < 0 || e.Quick.Seeds > e.Seeds {
		return fe("quick.seeds", e.Quick.Seeds, fmt.Sprintf("0..%d (at most seeds)", e.Seeds))
	}
	if e.DurationS <= 0 || e.DurationS > MaxDurationS {
		return fe("duration_s", e.DurationS, fmt.Sprintf("(0, %d]", MaxDurationS))
	}
	if e.Quick.DurationS < 0 || e.Quick.DurationS > e.DurationS {
		return fe("quick.duration_s", e.Quick.DurationS, "0..duration_s")
	}
	if len(e.Arms) == 0 || len(e.Arms) > MaxArms {
		return fe("arms", fmt.Sprintf("%d arms", len(e.Arms)), fmt.Sprintf("1..%d arms", MaxArms))
	}
	if err := checkKnobMap("knobs", e.Knobs); err != nil {
		return err
	}
	arms := map[string]*Arm{}
	var armNames []string
	for i := range e.Arms {
		a := &e.Arms[i]
		f := fmt.Sprintf("arms[%d]", i)
		if !armNameRE.MatchString(a.Name) {
			return fe(f+".name", fmt.Sprintf("%q", a.Name), "letters, digits, '_', '.', '-'")
		}
		if arms[a.Name] != nil {
			return fe(f+".name", fmt.Sprintf("%q", a.Name), "a name no other arm has")
		}
		arms[a.Name] = a
		armNames = append(armNames, a.Name)
		m := a.Machine
		if m == "" {
			m = e.Machine
		}
		if m != "" && !machineKnown(m) {
			return fe(f+".machine", fmt.Sprintf("%q", m), "an embedded machine preset")
		}
		if m == "" {
			return fe(f+".machine", `""`, "a machine, on the arm or the experiment")
		}
		if len(a.Workloads) == 0 && len(e.Workloads) == 0 {
			return fe(f+".workloads", "none", "at least one workload spec, on the arm or the experiment")
		}
		if a.DurationS < 0 || a.DurationS > MaxDurationS {
			return fe(f+".duration_s", a.DurationS, fmt.Sprintf("0 (experiment's) .. %d", MaxDurationS))
		}
		if err := checkKnobMap(f+".knobs", a.Knobs); err != nil {
			return err
		}
	}
	sort.Strings(armNames)
	checkRef := func(field, ref string) error {
		r, err := ParseMetricRef(ref)
		if err != nil {
			return fe(field, fmt.Sprintf("%q", ref), "ARM[/WORKLOAD]:FIELD with FIELD one of "+strings.Join(MetricFields, ", "))
		}
		if arms[r.Arm] == nil {
			return fe(field, fmt.Sprintf("%q", ref), "an arm name: "+strings.Join(armNames, ", "))
		}
		return nil
	}
	for i, r := range e.Rows {
		if err := checkRef(fmt.Sprintf("rows[%d].sim", i), r.Sim); err != nil {
			return err
		}
	}
	if len(e.Checks) == 0 {
		return fe("checks", "none", "at least one check")
	}
	for i, c := range e.Checks {
		f := fmt.Sprintf("checks[%d]", i)
		if err := checkRef(f+".a", c.A); err != nil {
			return err
		}
		switch c.Kind {
		case "ratio", "within":
			if err := checkRef(f+".b", c.B); err != nil {
				return err
			}
		case "range":
		default:
			return fe(f+".kind", fmt.Sprintf("%q", c.Kind), `"ratio", "range" or "within"`)
		}
		if c.Kind == "within" && c.Pct == nil {
			return fe(f+".pct", "missing", "a percentage for a within check")
		}
		if c.Kind != "within" && c.Min == nil && c.Max == nil {
			return fe(f, "no bounds", "min and/or max")
		}
	}
	rules := make([]string, len(e.Checks))
	for i, c := range e.Checks {
		rules[i] = fmt.Sprintf("%q", c.Rule)
	}
	for _, rule := range sortedKeys(e.Quick.KnownFail) {
		if !slices.ContainsFunc(e.Checks, func(c Check) bool { return c.Rule == rule }) {
			return fe("quick.known_fail", fmt.Sprintf("%q", rule), "the rule of one of the checks: "+strings.Join(rules, ", "))
		}
		if strings.TrimSpace(e.Quick.KnownFail[rule]) == "" {
			return fe("quick.known_fail", fmt.Sprintf("%q: no diagnosis", rule), "why the check does not hold at the quick size")
		}
	}
	return nil
}

func checkKnobMap(field string, m map[string]string) error {
	for _, name := range sortedKeys(m) {
		id, ok := knob.Lookup(name)
		if !ok {
			return &machine.FieldError{Field: field + "." + name, Value: "(unknown knob)", Allowed: "a knob: " + strings.Join(knob.Names(), ", ")}
		}
		d := knob.ByID(id)
		if _, err := d.Parse(m[name]); err != nil {
			return &machine.FieldError{Field: field + "." + name, Value: fmt.Sprintf("%q", m[name]), Allowed: d.Allowed()}
		}
	}
	return nil
}

// loadExperiments parses experiments/*.json (after the machines, which
// experiments refer to).
func (r *registry) loadExperiments(fsys fs.FS) []error {
	var errs []error
	entries, err := fs.ReadDir(fsys, experimentDir)
	if err != nil {
		return nil // no experiments directory
	}
	for _, en := range entries {
		file := en.Name()
		if en.IsDir() || path.Ext(file) != ".json" {
			continue
		}
		want := strings.TrimSuffix(file, ".json")
		data, err := fs.ReadFile(fsys, path.Join(experimentDir, file))
		if err != nil {
			r.broken[want] = &Error{file, err}
			errs = append(errs, r.broken[want])
			continue
		}
		e, err := parseExperimentWith(r, data, file)
		if err == nil && e.Name != want {
			err = &Error{file, &machine.FieldError{Field: "name", Value: fmt.Sprintf("%q", e.Name),
				Allowed: fmt.Sprintf("%q (an embedded preset is named like its file)", want)}}
		}
		if err != nil {
			r.broken[want] = err
			errs = append(errs, err)
			continue
		}
		r.experiments[e.Name] = e
		r.experimentNames = append(r.experimentNames, e.Name)
	}
	sort.Strings(r.experimentNames)
	return errs
}

// parseExperimentWith parses while the registry is being built (load()
// is not usable yet inside loadOnce).
func parseExperimentWith(r *registry, data []byte, source string) (*Experiment, error) {
	prev := building
	building = r
	defer func() { building = prev }()
	return ParseExperiment(data, source)
}

// building is the registry under construction, consulted for machine
// names while experiments load.
var building *registry

func machineKnown(name string) bool {
	if building != nil {
		_, ok := building.machines[name]
		return ok
	}
	_, err := Machine(name)
	return err == nil
}

// Experiments returns every embedded experiment, sorted by name.
func Experiments() []*Experiment {
	r := load()
	out := make([]*Experiment, 0, len(r.experimentNames))
	for _, n := range r.experimentNames {
		out = append(out, r.experiments[n])
	}
	return out
}

// ExperimentByName returns an embedded experiment (shared: do not modify).
// Before every preset is parsed, only name's own file is (and the files of
// the machines it names).
func ExperimentByName(name string) (*Experiment, error) {
	if !loaded.done.Load() {
		if e := lazyExperiment(name); e != nil {
			return e, nil
		}
	}
	r := load()
	if e, ok := r.experiments[name]; ok {
		return e, nil
	}
	if err, ok := r.broken[name]; ok {
		return nil, err
	}
	return nil, fmt.Errorf("unknown experiment %q (valid: %s)", name, strings.Join(r.experimentNames, ", "))
}

// lazyExperiment parses the one embedded file of experiment name, or
// returns nil as lazyMachine does.
func lazyExperiment(name string) *Experiment {
	return lazyParse(&lazy.experiments, experimentDir, name, ParseExperiment, func(e *Experiment) string { return e.Name })
}
