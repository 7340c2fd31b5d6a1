// Package scenario turns a run description (machine preset, workloads, knob
// settings, seed, duration) into a simulation and its results. The command
// line, the browser build and the share links all describe runs this way,
// so a run reproduces identically wherever it is started.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/presets"
)

// Limits on a run, so a hostile request cannot take unbounded time.
const (
	MaxDuration  = 3600 * engine.Second
	MaxRuns      = 100
	MaxWorkloads = 16
)

// Config describes one run.
type Config struct {
	// Preset names an embedded machine preset; Machine, when set, is a
	// custom machine used instead (Preset is then only a label).
	Preset  string
	Machine *machine.Spec
	// Workloads are specs like "schbench:m=2,t=22".
	Workloads []string
	// Knobs are "NAME=VALUE" settings applied over the machine's defaults.
	Knobs    []string
	Seed     uint64
	Duration int64 // ns
	// Debug checks engine invariants after every event.
	Debug bool
	// WakePolicy, when set, replaces select_idle_sibling (a compiled
	// policy file, policy.Program): each simulation gets its own
	// instance.
	WakePolicy WakePolicy
}

// WakePolicy is a compiled wake policy: its name (the file) and a fresh
// instance per simulation.
type WakePolicy interface {
	Name() string
	New() engine.WakePolicy
}

// ErrPolicy wraps the error of a wake policy that stopped a run.
var ErrPolicy = errors.New("wake policy")

// Machine returns the machine spec the config runs on.
func (c *Config) machineSpec() (*machine.Spec, error) {
	if c.Machine != nil {
		return c.Machine, nil
	}
	if c.Preset == "" {
		return nil, fmt.Errorf("no preset given (valid presets: %s)", strings.Join(presetNames(), ", "))
	}
	return presets.Machine(c.Preset)
}

func presetNames() []string {
	var out []string
	for _, m := range presets.Machines() {
		out = append(out, m.Name)
	}
	return out
}

// KnobValues resolves the knob table defaults, then the machine's cost
// values, then the config's settings.
func KnobValues(spec *machine.Spec, sets []string) (knob.Values, error) {
	k := knob.Defaults()
	for name, v := range spec.Costs {
		id, ok := knob.Lookup(name)
		if !ok {
			return k, fmt.Errorf("machine %s: %v", spec.Name, knob.UnknownError(name))
		}
		if err := k.SetValue(id, v); err != nil {
			return k, fmt.Errorf("machine %s: %v", spec.Name, err)
		}
	}
	// The era goes first: it decides which knobs exist and their defaults.
	ordered := make([]string, 0, len(sets))
	for _, set := range sets {
		if name, _, _ := strings.Cut(set, "="); strings.EqualFold(strings.TrimSpace(name), "era") {
			ordered = append(ordered, set)
		}
	}
	for _, set := range sets {
		if name, _, _ := strings.Cut(set, "="); !strings.EqualFold(strings.TrimSpace(name), "era") {
			ordered = append(ordered, set)
		}
	}
	for _, set := range ordered {
		name, val, ok := strings.Cut(set, "=")
		if !ok {
			return k, fmt.Errorf("knob setting %q is not NAME=VALUE", set)
		}
		if err := k.Set(strings.TrimSpace(name), val); err != nil {
			return k, err
		}
	}
	return k, nil
}

// Validate checks everything that can be checked before building.
func (c *Config) Validate() error {
	if c.Duration <= 0 || c.Duration > MaxDuration {
		return fmt.Errorf("duration %v out of range (allowed: 1ns..%v)", time.Duration(c.Duration), time.Duration(MaxDuration))
	}
	if len(c.Workloads) > MaxWorkloads {
		return fmt.Errorf("%d workloads (limit %d)", len(c.Workloads), MaxWorkloads)
	}
	for _, w := range c.Workloads {
		if _, err := workload.Parse(w); err != nil {
			return err
		}
	}
	return nil
}

// Check validates the whole config against its machine without building
// the simulation: every error here is a problem with the input.
func (c *Config) Check() (*machine.Topology, knob.Values, error) {
	if err := c.Validate(); err != nil {
		return nil, knob.Values{}, err
	}
	spec, err := c.machineSpec()
	if err != nil {
		return nil, knob.Values{}, err
	}
	tp, err := machine.Build(spec)
	if err != nil {
		return nil, knob.Values{}, fmt.Errorf("machine %s: %v", spec.Name, err)
	}
	k, err := KnobValues(spec, c.Knobs)
	if err != nil {
		return nil, k, err
	}
	for _, w := range c.Workloads {
		if err := workload.Check(w, tp.NCPU); err != nil {
			return nil, k, err
		}
	}
	return tp, k, nil
}

// Build creates the simulation with its workloads at time zero.
func (c *Config) Build() (*engine.Sim, error) {
	tp, k, err := c.Check()
	if err != nil {
		return nil, err
	}
	ec := engine.Config{Machine: tp, Knobs: k, Seed: c.Seed, Debug: c.Debug}
	if c.WakePolicy != nil {
		ec.WakePolicy = c.WakePolicy.New()
	}
	sim, err := engine.New(ec)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for _, w := range c.Workloads {
		sp, _ := workload.Parse(w)
		seen[sp.Kind]++
		name := sp.Kind
		if seen[sp.Kind] > 1 {
			name = fmt.Sprintf("%s#%d", sp.Kind, seen[sp.Kind])
		}
		if _, err := workload.Add(sim, w, name); err != nil {
			return nil, err
		}
	}
	return sim, nil
}

// ErrInterrupted is returned when a run's context ends it before its
// duration.
var ErrInterrupted = errors.New("run interrupted before its end")

// Run builds the simulation, runs it and summarises it. A run ends at the
// duration, or earlier once every finite workload (hackbench, pipe,
// compile, a finite rt-app file) has finished.
func Run(c Config) (*Result, error) {
	return RunContext(context.Background(), c)
}

// RunContext is Run that also stops, between two events, once ctx is
// done. It then returns the summary of the part done (its DurationS is
// the simulated time reached) together with ErrInterrupted.
func RunContext(ctx context.Context, c Config) (*Result, error) {
	sim, err := c.Build()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	stopped := AdvanceContext(ctx, sim, c.Duration)
	wall := time.Since(start).Seconds()
	r := Summarize(&c, sim, wall)
	if err := PolicyError(sim); err != nil {
		return r, err
	}
	if stopped {
		return r, ErrInterrupted
	}
	return r, nil
}

// PolicyError is the error of the wake policy that stopped sim, wrapped
// in ErrPolicy with the simulated time it stopped at, or nil.
func PolicyError(sim *engine.Sim) error {
	if err := sim.Err(); err != nil {
		return fmt.Errorf("%w stopped the run at %.6f s simulated: %w", ErrPolicy, float64(sim.Now())/float64(engine.Second), err)
	}
	return nil
}

// Advance runs sim to time t, stopping early (at the finishing event)
// when every finite workload has finished.
func Advance(sim *engine.Sim, t int64) {
	AdvanceContext(context.Background(), sim, t)
}

// checkEvery is how many events AdvanceContext runs between two looks at
// its context (about a millisecond of wall time).
const checkEvery = 1024

// AdvanceContext is Advance that also stops, between two events, once ctx
// is done; it reports whether it stopped for that reason. The simulation
// is left consistent at the time reached, so it can be summarised.
func AdvanceContext(ctx context.Context, sim *engine.Sim, t int64) (interrupted bool) {
	done := ctx.Done()
	for n := 0; ; n++ {
		if done != nil && n%checkEvery == 0 {
			select {
			case <-done:
				return true
			default:
			}
		}
		next := sim.NextEventTime()
		if next < 0 || next > t {
			sim.RunUntil(t)
			return false
		}
		sim.Step()
		if sim.AllFinished() {
			return false
		}
	}
}
