package oracle

import (
	"fmt"
	"sort"
	"strings"

	"schedplay/engine/knob"
)

// Feature is a scheduler feature set on both sides of a comparison: the
// guest writes NAME or NO_NAME into /sys/kernel/debug/sched/features
// before the load starts, and the simulation gets the knob of the same
// name. Only a knob that is one of the kernel's own sched_feats, and that
// exists in the kernel's era, can be one.
type Feature struct {
	Name string `json:"name"` // the sched_feat's name, which is the knob's
	On   bool   `json:"on"`
}

// Token is what the guest writes into sched/features, and what its
// features line shows once the write took: NAME, or NO_NAME.
func (f Feature) Token() string {
	if f.On {
		return f.Name
	}
	return "NO_" + f.Name
}

// Knob is the simulation's setting.
func (f Feature) Knob() string {
	if f.On {
		return f.Name + "=true"
	}
	return f.Name + "=false"
}

func (f Feature) String() string {
	if f.On {
		return f.Name + "=1"
	}
	return f.Name + "=0"
}

// isSchedFeat says whether name is in k's features.h.
func (k *Kernel) isSchedFeat(name string) bool {
	for _, f := range k.SchedFeatures {
		if f == name {
			return true
		}
	}
	return false
}

// FeatureKnobs are the features --feature takes for k: its sched_feats
// that are Bool knobs of the Feature group existing in its era, sorted.
func (k *Kernel) FeatureKnobs() []string {
	era, err := knob.ParseEra(k.Era)
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range k.SchedFeatures {
		id, ok := knob.Lookup(name)
		if !ok {
			continue
		}
		d := knob.ByID(id)
		if d.Name != name || d.Kind != knob.Bool || d.Group != knob.Feature {
			continue
		}
		if ok, _ := knob.Exists(id, era); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ParseFeature reads one --feature NAME=0|1 for kernel k, refusing a
// name that is not a knob, a knob that is not one of k's sched_feats (a
// schedplay-only proposal, a tunable), and a knob k's era does not have;
// every refusal names the allowed features.
func (k *Kernel) ParseFeature(s string) (Feature, error) {
	allowed := fmt.Sprintf("(allowed for kernel %s: %s, each =0 or =1)", k.Name, strings.Join(k.FeatureKnobs(), ", "))
	name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || name == "" {
		return Feature{}, fmt.Errorf("--feature %q: want NAME=0|1 %s", s, allowed)
	}
	var on bool
	switch val {
	case "1":
		on = true
	case "0":
	default:
		return Feature{}, fmt.Errorf("--feature %s: value %q not allowed (allowed: 0, 1)", name, val)
	}
	id, isKnob := knob.Lookup(name)
	if isKnob {
		name = knob.ByID(id).Name
	}
	if !isKnob {
		if up := strings.ToUpper(name); k.isSchedFeat(up) {
			return Feature{}, fmt.Errorf("--feature %s: a sched_feat of kernel %s that the simulation has no knob for (not modelled) %s", name, k.Name, allowed)
		}
		return Feature{}, fmt.Errorf("--feature %s: not a knob %s", name, allowed)
	}
	d := knob.ByID(id)
	if d.Kind != knob.Bool || d.Group != knob.Feature || !k.isSchedFeat(name) {
		var in []string
		for i := range Kernels {
			if Kernels[i].isSchedFeat(name) {
				in = append(in, Kernels[i].Name)
			}
		}
		what := fmt.Sprintf("a %s knob of the simulation, in no kernel's features.h", d.Group)
		if len(in) > 0 {
			what = "it is one of kernel " + strings.Join(in, " and ") + "'s"
		}
		return Feature{}, fmt.Errorf("--feature %s: a knob, but not a sched_feat of kernel %s (not in its kernel/sched/features.h: %s) %s", name, k.Name, what, allowed)
	}
	era, err := knob.ParseEra(k.Era)
	if err != nil {
		return Feature{}, err
	}
	if ok, why := knob.Exists(id, era); !ok {
		return Feature{}, fmt.Errorf("--feature %s: a sched_feat of kernel %s, but knob %s does not exist in era %s, which the simulation runs: %s %s", name, k.Name, name, era, why, allowed)
	}
	return Feature{Name: name, On: on}, nil
}

// ParseFeatures reads every --feature for k; a feature given twice must
// say the same both times.
func (k *Kernel) ParseFeatures(specs []string) ([]Feature, error) {
	var out []Feature
	seen := map[string]bool{}
	for _, s := range specs {
		f, err := k.ParseFeature(s)
		if err != nil {
			return nil, err
		}
		if on, dup := seen[f.Name]; dup {
			if on != f.On {
				return nil, fmt.Errorf("--feature %s given as both 0 and 1", f.Name)
			}
			continue
		}
		seen[f.Name] = f.On
		out = append(out, f)
	}
	return out, nil
}

// CheckFeatures verifies that the guest applied fs: its features line
// (read after the writes) shows each token, and the write itself did not
// fail.
func (v *GuestView) CheckFeatures(fs []Feature) error {
	if len(fs) == 0 {
		return nil
	}
	if len(v.Features) == 0 {
		return fmt.Errorf("the guest printed no sched features (is /sys/kernel/debug/sched/features there?): --feature %s cannot be verified", fs[0])
	}
	shown := map[string]bool{}
	for _, t := range v.Features {
		shown[t] = true
	}
	var bad []string
	for _, f := range fs {
		if !shown[f.Token()] {
			why := "its features line does not show " + f.Token()
			if r, ok := v.FeatureWrites[f.Token()]; ok && r != "ok" {
				why = fmt.Sprintf("writing %s to sched/features failed (%s)", f.Token(), r)
			}
			bad = append(bad, fmt.Sprintf("--feature %s: %s", f, why))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the guest did not apply its features: %s", strings.Join(bad, "; "))
	}
	return nil
}
