// Package playground is the browser playground's model, in pure Go so it is
// tested natively: the state a share link carries (machine, workloads, the
// knobs of arm A and of an optional arm B, seed, speed), its encoding in
// the URL fragment, and an App that builds the simulations and advances
// them frame by frame within a wall-time budget. The js/wasm shell (wasm/)
// binds it to the page; ui/ draws it.
package playground

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"schedplay/internal/json"

	"schedplay/engine/field"
	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/engine/workload"
	"schedplay/presets"
	"schedplay/scenario"
)

// LinkVersion is the share-link format version (v=1).
const LinkVersion = 1

// linkChanges says, for each older link version the page still reads,
// what a link of that version opens differently today; the page shows it
// in a banner over the run (VersionNotice). Whoever changes how a link is
// read moves LinkVersion, adds the old version here with what changed, and
// moves testdata/links-v*.txt's expectations (TestOldLinksOpenTheSameRuns
// fails until then). A version neither current nor listed is refused.
// There is only v=1 so far.
var linkChanges = map[int]string{}

// linkVersion reads a link's v= value: the current version, or an older
// one linkChanges lists.
func linkVersion(val string) (int, error) {
	n, err := strconv.Atoi(val)
	if err == nil && n == LinkVersion {
		return n, nil
	}
	if _, ok := linkChanges[n]; ok && err == nil {
		return n, nil
	}
	known := []string{strconv.Itoa(LinkVersion)}
	for v := range linkChanges {
		known = append(known, strconv.Itoa(v))
	}
	sort.Strings(known)
	return 0, fmt.Errorf("link version %q not supported (this page reads v=%s)", val, strings.Join(known, ", v="))
}

// VersionNotice is the banner for a link of an older format version: what
// it opens differently from when it was written. It is "" for a link of
// the current version, without v=, or that does not parse.
func VersionNotice(fragment string) string {
	for _, part := range strings.Split(strings.TrimPrefix(fragment, "#"), "&") {
		if val, ok := strings.CutPrefix(part, "v="); ok {
			n, err := linkVersion(val)
			if err != nil || n == LinkVersion {
				return ""
			}
			return fmt.Sprintf("This link was written in link format v=%d; this page reads v=%d and opens it with these changes: %s", n, LinkVersion, linkChanges[n])
		}
	}
	return ""
}

// Limits on what a link may ask for, so a hostile link is refused with the
// limit named instead of hanging the tab.
const (
	MaxFragmentBytes = 256 << 10
	MaxWorkloads     = scenario.MaxWorkloads
	MaxSpeed         = 1e6
	MinSpeed         = 0.0001
)

// Defaults of a fresh page. DefaultWorkload is the example the page gives
// when no workload is set; each machine has its own default workloads
// (PresetWorkloads).
const (
	DefaultPreset   = "intel-2s-44c-88t"
	DefaultWorkload = "schbench:m=2,t=22"
	DefaultSeed     = 1
	DefaultSpeed    = 1.0
)

// State is everything a share link carries.
type State struct {
	// Preset names an embedded machine preset; Machine, when set, is a
	// custom machine carried in the link (Preset then only names it).
	Preset    string
	Machine   *machine.Spec
	Workloads []string
	// Knobs are arm A's settings that differ from the machine's defaults.
	Knobs map[string]string
	// AB opens the split view; KnobsB are arm B's settings (relative to
	// the machine's defaults, like Knobs).
	AB     bool
	KnobsB map[string]string
	Seed   uint64
	// Speed is simulated seconds per wall second; 0 means "max".
	Speed float64
	// Extra are the knobs of arms C and D (with AB on; a link's
	// "arms=3|4" and "c.KNOB", "d.KNOB" keys), as experiments open them.
	Extra []map[string]string
	// Experiment, when set, names the experiment preset the state came
	// from; the arms are already in Knobs, KnobsB and Extra. The link
	// names it (exp=) while the arms are still the experiment's.
	Experiment string
	// Policies are the arms' wake policies (A, B, C, D; policy.go): the
	// link's "policy", "b.policy", … keys. A policy that does not compile
	// is kept (the page shows its error and does not run that arm).
	Policies [MaxArms]Policy
}

// MaxArms is how many arms run side by side.
const MaxArms = 4

// NumArms is how many arms the state runs (1, 2 with AB, up to MaxArms).
func (st *State) NumArms() int {
	if !st.AB {
		return 1
	}
	return 2 + len(st.Extra)
}

// armKnobs returns arm i's knob map.
func (st *State) armKnobs(i int) map[string]string {
	switch {
	case i == 0:
		return st.Knobs
	case i == 1:
		return st.KnobsB
	case i-2 < len(st.Extra):
		return st.Extra[i-2]
	}
	return map[string]string{}
}

// Default returns the state of a fresh page (an empty link): the V1
// story as A/B on one Intel socket (see defaults.go).
func Default() State {
	st := Base()
	st.AB = true
	for k, v := range storyKnobs {
		st.Knobs[k], st.KnobsB[k] = v, v
	}
	for k, v := range storyKnobsB {
		st.KnobsB[k] = v
	}
	return st
}

// Base is what a link starts from: the default machine with its default
// workloads, every knob at the machine's default, one arm. A link lists
// what differs from it.
func Base() State {
	w, _ := PresetWorkloads(DefaultPreset)
	return State{Preset: DefaultPreset, Workloads: w, Seed: DefaultSeed, Speed: DefaultSpeed,
		Knobs: map[string]string{}, KnobsB: map[string]string{}}
}

// MachineSpec returns the machine the state runs on.
func (st *State) MachineSpec() (*machine.Spec, error) {
	if st.Machine != nil {
		return st.Machine, nil
	}
	return presets.Machine(st.Preset)
}

// Config returns the scenario config of arm 0 (A) or 1 (B).
func (st *State) Config(arm int) scenario.Config {
	m := st.armKnobs(arm)
	var sets []string
	for _, k := range sortedKeys(m) {
		sets = append(sets, k+"="+m[k])
	}
	c := scenario.Config{Preset: st.Preset, Machine: st.Machine, Workloads: append([]string(nil), st.Workloads...),
		Knobs: sets, Seed: st.Seed, Duration: scenario.MaxDuration}
	// A policy that does not compile is left out here: the build names
	// its error (Arm.PolicyErr).
	if prog, err := CompilePolicy(st.ArmPolicy(arm)); err == nil && prog != nil {
		c.WakePolicy = prog
	}
	return c
}

// Validate checks the state as the simulation would.
func (st *State) Validate() error {
	if len(st.Workloads) == 0 {
		return fmt.Errorf("no workload (add one, e.g. %s)", DefaultWorkload)
	}
	if len(st.Workloads) > MaxWorkloads {
		return fmt.Errorf("%d workloads: at most %d", len(st.Workloads), MaxWorkloads)
	}
	if st.Speed != 0 && !(st.Speed >= MinSpeed && st.Speed <= MaxSpeed) { // NaN fails too
		return fmt.Errorf("speed %g out of range (allowed: %g..%g, or max)", st.Speed, MinSpeed, MaxSpeed)
	}
	arms := st.NumArms()
	if arms > MaxArms {
		return fmt.Errorf("%d arms: at most %d", arms, MaxArms)
	}
	for a := 0; a < arms; a++ {
		cfg := st.Config(a)
		if _, _, err := cfg.Check(); err != nil {
			if arms > 1 {
				return fmt.Errorf("arm %c: %v", 'A'+a, err)
			}
			return err
		}
	}
	return nil
}

// reserved are the fragment keys that are not knobs.
var reserved = []string{"v", "preset", "machine", "w", "seed", "speed", "ab", "arms", "exp", "policy"}

// Parse reads a URL fragment ("#preset=…&w=…&SIS_CORE=0&seed=7"), with or
// without the leading '#'. Knob keys name arm A's knobs; "b.KNOB" arm B's.
// Every problem is an error naming the key and what is allowed; the caller
// keeps (or falls back to) a good state.
//
// An empty fragment is the fresh page (Default); any other starts from
// Base. A link without w= runs its machine's default workloads.
func Parse(fragment string) (State, error) {
	fragment = strings.TrimPrefix(fragment, "#")
	if len(fragment) > MaxFragmentBytes {
		return Default(), fmt.Errorf("link is %d bytes: at most %d", len(fragment), MaxFragmentBytes)
	}
	if strings.TrimSpace(fragment) == "" {
		return Default(), nil
	}
	st := Base()
	var workloads []string
	sawWorkload, sawExp := false, false
	// The knob keys the link sets, to check against their arm's era once
	// every key is read (a link lists era after the knobs it sorts before).
	type setKey struct {
		key, name string
		arm       int
	}
	var set []setKey
	for _, part := range strings.Split(fragment, "&") {
		if part == "" {
			continue
		}
		key, raw, _ := strings.Cut(part, "=")
		val, err := url.PathUnescape(raw)
		if err != nil {
			return Default(), fmt.Errorf("link key %q: bad percent-encoding in %q", key, raw)
		}
		switch key {
		case "v":
			if _, err := linkVersion(val); err != nil {
				return Default(), err
			}
		case "preset":
			st.Preset = val
		case "machine":
			spec, err := decodeMachine(val)
			if err != nil {
				return Default(), err
			}
			st.Machine = spec
		case "w":
			sawWorkload = true
			if val != "" {
				workloads = append(workloads, val)
			}
		case "seed":
			n, err := field.Uint("link key seed", val)
			if err != nil {
				return Default(), err
			}
			st.Seed = n
		case "speed":
			if val == "max" {
				st.Speed = 0
				break
			}
			f, err := field.Float("link key speed", val, MinSpeed, MaxSpeed)
			if err != nil {
				return Default(), fmt.Errorf("%v (or max)", err)
			}
			st.Speed = f
		case "ab":
			switch val {
			case "1", "true":
				st.AB = true
			case "0", "false":
				st.AB = false
			default:
				return Default(), fmt.Errorf("link key ab: %q (allowed: 0 or 1)", val)
			}
		case "arms":
			n, err := field.Uint("link key arms", val)
			if err != nil || n < 1 || n > MaxArms {
				return Default(), fmt.Errorf("link key arms: %q (allowed: 1..%d)", val, MaxArms)
			}
			st.AB = n > 1
			st.Extra = st.Extra[:0]
			for len(st.Extra) < int(n)-2 {
				st.Extra = append(st.Extra, map[string]string{})
			}
		case "exp":
			sawExp = true
			if err := st.applyExperiment(val); err != nil {
				return Default(), err
			}
		case "policy", "b.policy", "c.policy", "d.policy":
			p, err := decodePolicy(key, val)
			if err != nil {
				return Default(), err
			}
			i := 0
			if key != "policy" {
				i = int(key[0] - 'a')
			}
			switch i {
			case 1:
				st.AB = true
			case 2, 3:
				st.extra(i - 2)
			}
			st.Policies[i] = p
		default:
			target := st.Knobs
			name, arm := key, 0
			if b, ok := strings.CutPrefix(key, "b."); ok {
				target, name, arm = st.KnobsB, b, 1
			} else if x, ok := strings.CutPrefix(key, "c."); ok {
				target, name, arm = st.extra(0), x, 2
			} else if x, ok := strings.CutPrefix(key, "d."); ok {
				target, name, arm = st.extra(1), x, 3
			}
			id, ok := knob.Lookup(name)
			if !ok {
				return Default(), fmt.Errorf("link key %q is neither a knob nor one of %s%s (knobs: see the panel or `schedsim knobs`)",
					key, strings.Join(reserved, ", "), field.Suggest(name, append(knob.Names(), reserved...)))
			}
			d := knob.ByID(id)
			if _, err := d.Parse(val); err != nil {
				return Default(), fmt.Errorf("link: %v", err)
			}
			target[d.Name] = val
			set = append(set, setKey{key, d.Name, arm})
		}
	}
	// A knob the arm's era does not have is refused by name, whatever its
	// value, as the panel refuses it (the engine would accept the value an
	// absent knob reads as, so DELAY_DEQUEUE=0 would pass in era 6.6).
	for _, k := range set {
		m := st.armKnobs(k.arm)
		if _, ok := m[k.name]; !ok {
			continue // the arm was dropped by a later arms=
		}
		era := knob.Era52
		if v, ok := m["era"]; ok {
			if e, err := knob.ParseEra(v); err == nil {
				era = e
			}
		}
		id, _ := knob.Lookup(k.name)
		if ok, why := knob.Exists(id, era); !ok {
			return Default(), fmt.Errorf("link key %q: knob %s does not exist in era %s: %s", k.key, k.name, era, why)
		}
	}
	if st.Machine == nil {
		if _, err := presets.Machine(st.Preset); err != nil {
			return Default(), fmt.Errorf("link key preset: %v", err)
		}
	} else if st.Preset == DefaultPreset {
		st.Preset = st.Machine.Name
	}
	for i := st.NumArms(); i < MaxArms; i++ {
		st.Policies[i] = Policy{} // the arm was dropped by a later arms= or ab=0
	}
	if sawWorkload {
		st.Workloads = workloads
	} else if !sawExp {
		st.Workloads = st.defaultWorkloads()
	}
	if err := st.Validate(); err != nil {
		return Default(), fmt.Errorf("link: %v", err)
	}
	return st, nil
}

// extra returns arm C's (i 0) or D's (i 1) knob map, adding the arm.
func (st *State) extra(i int) map[string]string {
	st.AB = true
	for len(st.Extra) <= i {
		st.Extra = append(st.Extra, map[string]string{})
	}
	return st.Extra[i]
}

// LiveArms are the indices of experiment e's arms the page runs side by
// side: the first arm, and the following ones on the same machine with
// the same workloads (only knobs differ), up to MaxArms.
func LiveArms(e *presets.Experiment) []int {
	m, w, _ := e.ArmSetup(0)
	out := []int{0}
	for i := 1; i < len(e.Arms) && len(out) < MaxArms; i++ {
		mi, wi, _ := e.ArmSetup(i)
		if mi == m && strings.Join(wi, "\x00") == strings.Join(w, "\x00") {
			out = append(out, i)
		}
	}
	return out
}

// applyExperiment opens an experiment preset: its machine and workloads,
// and its live arms (LiveArms) as A, B, C, D.
func (st *State) applyExperiment(name string) error {
	e, err := presets.ExperimentByName(name)
	if err != nil {
		return fmt.Errorf("link key exp: %v", err)
	}
	st.setExperiment(e)
	return nil
}

func (st *State) setExperiment(e *presets.Experiment) {
	st.Experiment = e.Name
	m, w, k := e.ArmSetup(0)
	st.Preset, st.Machine, st.Workloads, st.Knobs = m, nil, append([]string(nil), w...), k
	st.AB, st.KnobsB, st.Extra = false, map[string]string{}, nil
	st.Policies = [MaxArms]Policy{}
	for n, i := range LiveArms(e)[1:] {
		_, _, ki := e.ArmSetup(i)
		switch n {
		case 0:
			st.AB, st.KnobsB = true, ki
		default:
			st.Extra = append(st.Extra, ki)
		}
	}
}

// IsExperiment reports whether the state runs experiment Experiment's
// live arms as the experiment sets them (seed and speed aside).
func (st *State) IsExperiment() bool {
	if st.Experiment == "" {
		return false
	}
	e, err := presets.ExperimentByName(st.Experiment)
	if err != nil {
		return false
	}
	x := Base()
	x.setExperiment(e)
	x.Seed, x.Speed = st.Seed, st.Speed
	y := st.clone()
	y.Experiment = ""
	x.Experiment = ""
	return x.Encode() == y.Encode()
}

// Encode writes the state as a fragment (without '#'), with only the
// values that differ from a fresh page's and v=1 first.
func (st State) Encode() string {
	var parts []string
	parts = append(parts, "v="+strconv.Itoa(LinkVersion))
	if st.Experiment != "" && st.IsExperiment() {
		parts = append(parts, "exp="+st.Experiment)
	}
	if st.Machine != nil {
		b, _ := json.Marshal(st.Machine)
		parts = append(parts, "machine="+base64.RawURLEncoding.EncodeToString(b))
	} else if st.Preset != DefaultPreset {
		parts = append(parts, "preset="+st.Preset)
	}
	if !st.WorkloadsAreDefault() {
		if len(st.Workloads) == 0 {
			parts = append(parts, "w=")
		}
		for _, w := range st.Workloads {
			parts = append(parts, "w="+escape(w))
		}
	}
	for _, k := range sortedKeys(st.Knobs) {
		parts = append(parts, k+"="+escape(st.Knobs[k]))
	}
	pol := func(i int) {
		if p := st.ArmPolicy(i); p.IsSet() {
			parts = append(parts, policyKey(i)+"="+encodePolicy(p))
		}
	}
	pol(0)
	if st.AB {
		parts = append(parts, "ab=1")
		for _, k := range sortedKeys(st.KnobsB) {
			parts = append(parts, "b."+k+"="+escape(st.KnobsB[k]))
		}
		pol(1)
		if len(st.Extra) > 0 {
			parts = append(parts, "arms="+strconv.Itoa(st.NumArms()))
		}
		for i, m := range st.Extra {
			for _, k := range sortedKeys(m) {
				parts = append(parts, string(rune('c'+i))+"."+k+"="+escape(m[k]))
			}
			pol(2 + i)
		}
	}
	if st.Seed != DefaultSeed {
		parts = append(parts, "seed="+strconv.FormatUint(st.Seed, 10))
	}
	if st.Speed != DefaultSpeed {
		if st.Speed == 0 {
			parts = append(parts, "speed=max")
		} else {
			parts = append(parts, "speed="+strconv.FormatFloat(st.Speed, 'g', -1, 64))
		}
	}
	return strings.Join(parts, "&")
}

// escape percent-encodes only what would break the fragment's syntax.
func escape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", " ", "%20")
	return r.Replace(s)
}

func decodeMachine(val string) (*machine.Spec, error) {
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "="))
	if err != nil {
		return nil, fmt.Errorf("link key machine: not base64url JSON (%v)", err)
	}
	spec, err := presets.ParseMachine(data, "link machine")
	if err != nil {
		return nil, fmt.Errorf("link key machine: %v", err)
	}
	return spec, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckWorkload validates one workload spec against the state's machine.
func (st *State) CheckWorkload(spec string) error {
	m, err := st.MachineSpec()
	if err != nil {
		return err
	}
	return workload.Check(spec, m.NumCPUs())
}
