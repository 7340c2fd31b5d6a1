package playground

import (
	"fmt"
	"slices"

	"schedplay/engine/machine"
	"schedplay/presets"
)

// The page's first screen is the V1 story of the 2019 select_idle_sibling
// series on one socket of the Intel box (presets/experiments/
// v1-sis-schbench-one-socket.json, arms B and C): schbench's 44 workers
// in one 44-CPU LLC, the bounded and rotating idle search in both arms,
// SIS_CORE on in A and off in B. With SIS_CORE off the search finds busy
// siblings and stacks wakeups behind running workers: arm B's p99 jumps
// to the scheduler's granularity (≈12 ms) within the first 200 ms of
// simulated time (seed 1), while arm A stays under 100 µs.
var (
	// storyKnobs are both arms' settings: the patch (bounded, rotating
	// select_idle_cpu) on the box's tuned granularities.
	storyKnobs = map[string]string{
		"SIS_BOUND":                   "true",
		"SIS_ROTATE":                  "true",
		"sched_min_granularity_ns":    "2500000",
		"sched_wakeup_granularity_ns": "3750000",
	}
	// storyKnobsB adds the one difference.
	storyKnobsB = map[string]string{"SIS_CORE": "false"}
)

// machineWorkloads are the default workloads of each machine preset,
// sized to it: schbench with about a quarter to a half of the CPUs busy,
// so that the idle search has something to find and something to miss.
var machineWorkloads = map[string][]string{
	"intel-2s-44c-88t":      {"schbench:m=2,t=22,cpus=0-21,44-65"},
	"amd-7950x-16c-32t":     {"schbench:m=2,t=8"},
	"amd-zen3-2s-128c-256t": {"schbench:m=4,t=32"},
	"amd-zen4-2s-256c-512t": {"schbench:m=8,t=32"},
	"power9-2s-44c-176t":    {"schbench:m=2,t=44"},
	"sparc-2s-16c-128t":     {"schbench:m=2,t=32"},
	"p4-ht-1c-2t":           {"schbench:m=1,t=1"},
	"p4-up-1c-1t":           {"schbench:m=1,t=1"},
}

// PresetWorkloads returns the default workloads of a machine preset.
func PresetWorkloads(preset string) ([]string, bool) {
	w, ok := machineWorkloads[preset]
	return slices.Clone(w), ok
}

// CustomWorkloads returns the default workloads of a custom machine:
// schbench with two message threads and an eighth of its CPUs as
// workers each (a quarter of the machine busy).
func CustomWorkloads(spec *machine.Spec) []string {
	return []string{fmt.Sprintf("schbench:m=2,t=%d", max(1, spec.NumCPUs()/8))}
}

// defaultWorkloads are the default workloads of the state's machine.
func (st *State) defaultWorkloads() []string {
	if st.Machine != nil {
		return CustomWorkloads(st.Machine)
	}
	if w, ok := PresetWorkloads(st.Preset); ok {
		return w
	}
	if spec, err := st.MachineSpec(); err == nil {
		return CustomWorkloads(spec)
	}
	return []string{DefaultWorkload}
}

// WorkloadsAreDefault reports whether the workloads are the machine's
// default ones (not edited by the user).
func (st *State) WorkloadsAreDefault() bool {
	return slices.Equal(st.Workloads, st.defaultWorkloads())
}

// SetMachine switches to the machine preset name (custom: a machine
// carried in the link). Workloads that were the old machine's defaults
// become the new machine's; edited ones stay.
func (st *State) SetMachine(name string, custom *machine.Spec) {
	keep := !st.WorkloadsAreDefault()
	st.Preset, st.Machine, st.Experiment = name, custom, ""
	if custom != nil {
		st.Preset = custom.Name
	}
	if !keep {
		st.Workloads = st.defaultWorkloads()
	}
}

// StoryText is what the fresh page's run shows.
const StoryText = "Both arms run schbench's 44 workers on one socket of a 2-socket Intel box " +
	"(44 CPUs, one last-level cache) with the 2019 patch: a bounded, rotating select_idle_cpu. " +
	"Arm A keeps SIS_CORE on (look for a fully idle core first); arm B turns it off. " +
	"Within a few simulated seconds (by 2 s at this seed), B's p99 wakeup latency jumps from under 100 µs to about 12 ms: " +
	"the short scan lands wakeups on busy SMT siblings, where they wait a whole time slice. " +
	"Press \"Step one wakeup\" to see one decision: the stages tried and every CPU probed."

// Story says what the state's run shows: the fresh page's story, an
// experiment's title and arms, or "" for anything else.
func (st *State) Story() string {
	if st.Machine == nil && st.Preset == DefaultPreset && st.AB && len(st.Extra) == 0 && st.Seed == DefaultSeed {
		plain := st.Clone()
		plain.Speed = DefaultSpeed
		if plain.Encode() == Default().Encode() {
			return StoryText
		}
	}
	if st.IsExperiment() {
		if e, err := presets.ExperimentByName(st.Experiment); err == nil {
			return e.Target + ": " + e.Title
		}
	}
	return ""
}
