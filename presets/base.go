package presets

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"

	"schedplay/internal/json"

	"schedplay/engine/machine"
)

// Defaults of a custom machine (issue 27). A document may name a machine
// preset in "base": every field it does not give comes from that preset,
// except what describes the preset rather than the machine (name, title,
// source, notes) and per-socket or per-thread data that no longer fits a
// changed topology. Without a base, the fields with an obvious default get
// it and the others are required, each error naming the field and
// suggesting a base.
//
// Defaults without a base:
//
//	topology.numbering     "interleaved" (the x86 enumeration)
//	topology.cores_per_llc topology.cores_per_socket (one LLC per socket)
//	topology.llcs_per_ccd  0 (no grouping)
//	smt_throughput         [1.0] when threads_per_core is 1
//	costs, cache, numa_distance, reclaim distances, idle_driver: none
//	(the knob defaults, the generic cache sizes and distances, a cpuidle
//	driver), as before
//
// Required without a base: name, kind, topology.sockets,
// topology.cores_per_socket, topology.threads_per_core, idle_states, and
// smt_throughput when threads_per_core is above 1.

// notInherited lists the top-level fields a base does not supply: they
// describe the preset, not a machine derived from it.
var notInherited = []string{"name", "title", "source", "notes"}

// MachineNames lists the embedded machine presets without parsing
// them all.
func MachineNames() []string {
	var out []string
	for _, in := range List() {
		if in.Kind == KindMachine {
			out = append(out, in.Name)
		}
	}
	return out
}

// suggestBase is the hint a missing required field's error ends with.
func suggestBase() string {
	return fmt.Sprintf(`; or give "base": "<preset>" to take every missing field from a machine preset (%s)`, strings.Join(MachineNames(), ", "))
}

func missing(field, allowed string) error {
	return &machine.FieldError{Field: field, Value: "(missing)", Allowed: allowed + suggestBase()}
}

// applyDefaults fills the fields of obj that have an obvious default and
// refuses a missing field that has none. obj is changed in place.
func applyDefaults(obj map[string]any) (map[string]any, error) {
	tv, ok := obj["topology"]
	if !ok {
		return nil, missing("topology", "an object with sockets, cores_per_socket and threads_per_core")
	}
	topo, _ := tv.(map[string]any) // checkShape: an object
	for _, f := range []struct{ name, allowed string }{
		{"sockets", "1..64"},
		{"cores_per_socket", fmt.Sprintf("1..%d", machine.MaxCPUs)},
		{"threads_per_core", fmt.Sprintf("1..%d", machine.MaxThreadsPerCore)},
	} {
		if _, ok := topo[f.name]; !ok {
			return nil, missing("topology."+f.name, f.allowed)
		}
	}
	if _, ok := topo["numbering"]; !ok {
		topo["numbering"] = machine.Interleaved
	}
	if _, ok := topo["cores_per_llc"]; !ok {
		topo["cores_per_llc"] = topo["cores_per_socket"]
	}
	if _, ok := obj["smt_throughput"]; !ok {
		if num(topo["threads_per_core"]) != 1 {
			return nil, missing("smt_throughput", "threads_per_core entries, the first 1.0 (the throughput of a core with k busy threads)")
		}
		obj["smt_throughput"] = []any{json.Number("1.0")}
	}
	if _, ok := obj["idle_states"]; !ok {
		return nil, missing("idle_states", fmt.Sprintf("1..%d idle states, shallowest first", machine.MaxIdleStates))
	}
	return obj, nil
}

// applyBase returns obj completed from the machine preset name.
func applyBase(obj map[string]any, name string) (map[string]any, *machine.Spec, error) {
	base, err := Machine(name)
	if err != nil {
		return nil, nil, &machine.FieldError{Field: "base", Value: fmt.Sprintf("%q (unknown machine preset)", truncate(name, 40)),
			Allowed: "one of the machine presets " + strings.Join(MachineNames(), ", ")}
	}
	base.Title, base.Source, base.Notes = "", "", nil
	doc, err := stdjson.Marshal(base)
	if err != nil {
		return nil, nil, err
	}
	bt, err := decodeDocument(doc)
	if err != nil {
		return nil, nil, err
	}
	full, _ := bt.(map[string]any)
	for _, k := range notInherited {
		delete(full, k)
	}

	// A note is inherited only with the values it describes.
	if given(obj, "numa_distance") {
		delete(full, "numa_distance_note")
	}
	if given(obj, "reclaim_distance") || given(obj, "node_reclaim_distance") {
		delete(full, "reclaim_distance_note")
	}
	if costs, ok := obj["costs"].(map[string]any); ok {
		if notes, ok := full["cost_notes"].(map[string]any); ok {
			for k := range costs {
				delete(notes, k)
			}
		}
	}

	for k, v := range obj {
		switch k {
		case "topology", "cache", "costs", "cost_notes":
			// Objects merge key by key; null replaces.
			bm, bok := full[k].(map[string]any)
			um, uok := v.(map[string]any)
			if bok && uok {
				for kk, vv := range um {
					bm[kk] = vv
				}
				continue
			}
		}
		full[k] = v
	}

	// Data sized for the base's topology does not carry over to another.
	var notes []string
	topo, _ := full["topology"].(map[string]any)
	bTopo := base.Topology
	if num(topo["sockets"]) != int64(bTopo.Sockets) && !given(obj, "numa_distance") && base.NUMADistance != nil {
		delete(full, "numa_distance")
		delete(full, "numa_distance_note")
		notes = append(notes, fmt.Sprintf("numa_distance of base %s (%d nodes) dropped: this machine has %v sockets, which get the generic distance %d", name, bTopo.Sockets, topo["sockets"], machine.RemoteDistance))
	}
	if t := num(topo["threads_per_core"]); t != int64(bTopo.ThreadsPerCore) && !given(obj, "smt_throughput") {
		if t != 1 {
			return nil, nil, &machine.FieldError{Field: "smt_throughput",
				Value:   fmt.Sprintf("(missing; base %s's table is for %d threads per core)", name, bTopo.ThreadsPerCore),
				Allowed: fmt.Sprintf("threads_per_core (%d) entries, the first 1.0, given in the file", t)}
		}
		full["smt_throughput"] = []any{json.Number("1.0")}
	}
	if num(topo["cores_per_llc"]) != int64(bTopo.CoresPerLLC) && !given(obj, "cache", "llc_kb") && base.Cache.LLCKB != 0 {
		if c, ok := full["cache"].(map[string]any); ok {
			delete(c, "llc_kb")
		}
		notes = append(notes, fmt.Sprintf("cache.llc_kb of base %s (an LLC of %d cores) dropped: this machine's LLC spans %v cores, which get 2 MiB per core", name, bTopo.CoresPerLLC, topo["cores_per_llc"]))
	}
	if len(notes) > 0 {
		prev, _ := full["notes"].([]any)
		for _, n := range notes {
			prev = append(prev, n)
		}
		full["notes"] = prev
	}
	return full, base, nil
}

// num reads a whole JSON number of the tree (0 if it is not one).
func num(v any) int64 {
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return i
}

// given reports whether the document obj gives the field at path (a
// top-level key, or a key and a key of the object under it).
func given(obj map[string]any, path ...string) bool {
	v, ok := obj[path[0]]
	if !ok || len(path) == 1 {
		return ok
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[path[1]]
	return ok
}

// inherited marks a field error on a value the base supplied, so the
// user sees the value did not come from their file.
func inherited(err error, obj map[string]any, base *machine.Spec) error {
	var fe *machine.FieldError
	if base == nil || !errors.As(err, &fe) {
		return err
	}
	p := strings.FieldsFunc(fe.Field, func(r rune) bool { return r == '.' || r == '[' })
	if len(p) == 0 || p[0] == "name" {
		return err
	}
	if len(p) > 2 {
		p = p[:2]
	}
	if given(obj, p...) {
		return err
	}
	return &machine.FieldError{Field: fe.Field, Value: fmt.Sprintf("%v (inherited from base %s)", fe.Value, base.Name),
		Allowed: fe.Allowed + "; give " + strings.Join(p, ".") + " in the file"}
}
