package presets

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	json "github.com/goccy/go-json"
)

// A ten-line machine with a base gets every field it does not give from
// the base: costs, idle states, numbering, distances.
func TestBaseSuppliesMissingFields(t *testing.T) {
	doc := `{
  "name": "my-zen4",
  "kind": "machine",
  "base": "amd-zen4-2s-256c-512t",
  "topology": {"sockets": 2, "cores_per_socket": 64, "threads_per_core": 2}
}`
	s, err := ParseMachine([]byte(doc), "my.json")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Machine("amd-zen4-2s-256c-512t")
	if s.Name != "my-zen4" || s.Base != "amd-zen4-2s-256c-512t" {
		t.Errorf("name %q base %q", s.Name, s.Base)
	}
	if !reflect.DeepEqual(s.Costs, base.Costs) || len(s.Costs) == 0 {
		t.Errorf("costs %v, want the base's %v", s.Costs, base.Costs)
	}
	if !reflect.DeepEqual(s.IdleStates, base.IdleStates) || s.Topology.Numbering != base.Topology.Numbering ||
		s.Topology.CoresPerLLC != base.Topology.CoresPerLLC || !reflect.DeepEqual(s.NUMADistance, base.NUMADistance) {
		t.Errorf("inherited fields differ from the base: %+v", s)
	}
	if s.Title != "" || len(s.Notes) != 0 {
		t.Errorf("title %q notes %v: the base's description is not inherited", s.Title, s.Notes)
	}
	if s.NumCPUs() != 256 {
		t.Errorf("%d CPUs, want 256", s.NumCPUs())
	}
}

// A value the file gives wins over the base's; a cost the file gives
// needs its own note.
func TestBaseOverride(t *testing.T) {
	doc := `{"name": "x", "kind": "machine", "base": "intel-2s-44c-88t",
  "topology": {"numbering": "contiguous"},
  "costs": {"wake_ns": 777}, "cost_notes": {"wake_ns": "assumed: test"}}`
	s, err := ParseMachine([]byte(doc), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Machine("intel-2s-44c-88t")
	if s.Topology.Numbering != "contiguous" || s.Topology.Sockets != base.Topology.Sockets {
		t.Errorf("topology %+v", s.Topology)
	}
	if s.Costs["wake_ns"] != 777 {
		t.Errorf("costs %v", s.Costs)
	}
	for k, v := range base.Costs {
		if k != "wake_ns" && s.Costs[k] != v {
			t.Errorf("costs.%s = %d, want the base's %d", k, s.Costs[k], v)
		}
	}
	checkErr(t, []byte(`{"name": "x", "kind": "machine", "base": "intel-2s-44c-88t", "costs": {"wake_ns": 777}}`),
		"x.json", []string{"cost_notes.wake_ns", "missing"})
}

func TestBaseUnknown(t *testing.T) {
	checkErr(t, []byte(`{"name": "x", "kind": "machine", "base": "amd-zen9"}`), "x.json",
		[]string{"field base", `"amd-zen9"`, "amd-zen4-2s-256c-512t", "intel-2s-44c-88t", "p4-up-1c-1t"})
}

// A topology that differs from the base's drops the per-socket distance
// table, refuses a per-thread table that no longer fits, and marks an
// inherited value that no longer fits as inherited.
func TestBaseTopologyMismatch(t *testing.T) {
	s, err := ParseMachine([]byte(`{"name": "x", "kind": "machine", "base": "amd-zen4-2s-256c-512t",
  "topology": {"sockets": 4}}`), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.NUMADistance != nil || s.NUMADistanceNote != "" || s.NodeDistance(0, 3) != 20 {
		t.Errorf("numa_distance %v note %q: want the base's 2-node table dropped", s.NUMADistance, s.NUMADistanceNote)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "numa_distance of base amd-zen4-2s-256c-512t (2 nodes) dropped") {
		t.Errorf("notes %q", s.Notes)
	}
	checkErr(t, []byte(`{"name": "x", "kind": "machine", "base": "amd-zen4-2s-256c-512t", "topology": {"threads_per_core": 4}}`),
		"x.json", []string{"field smt_throughput", "threads per core", "threads_per_core (4) entries"})
	s, err = ParseMachine([]byte(`{"name": "x", "kind": "machine", "base": "amd-zen4-2s-256c-512t", "topology": {"threads_per_core": 1}}`), "x.json")
	if err != nil || !reflect.DeepEqual(s.SMTThroughput, []float64{1}) {
		t.Errorf("threads_per_core 1: %v %v", s, err)
	}
	checkErr(t, []byte(`{"name": "x", "kind": "machine", "base": "amd-zen4-2s-256c-512t", "topology": {"cores_per_socket": 12}}`),
		"x.json", []string{"field topology.cores_per_llc", "inherited from base amd-zen4-2s-256c-512t", "give topology.cores_per_llc in the file"})
}

// Without a base a missing field with an obvious default gets it and one
// without is refused, naming the field and suggesting a base.
func TestNoBaseDefaults(t *testing.T) {
	s, err := ParseMachine([]byte(`{"name": "tiny", "kind": "machine",
  "topology": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 1},
  "idle_states": [{"name": "C1", "exit_latency_us": 1, "target_residency_us": 2}]}`), "tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Topology.Numbering != "interleaved" || s.Topology.CoresPerLLC != 4 || !reflect.DeepEqual(s.SMTThroughput, []float64{1}) {
		t.Errorf("defaults %+v %v", s.Topology, s.SMTThroughput)
	}
	for _, c := range []struct{ doc, field string }{
		{`{"name": "t", "kind": "machine"}`, "field topology:"},
		{`{"name": "t", "kind": "machine", "topology": {"sockets": 1, "threads_per_core": 1}}`, "field topology.cores_per_socket:"},
		{`{"name": "t", "kind": "machine", "topology": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 1}}`, "field idle_states:"},
		{`{"name": "t", "kind": "machine", "topology": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 2}}`, "field smt_throughput:"},
	} {
		checkErr(t, []byte(c.doc), "t.json", []string{c.field, "(missing)", `"base": "<preset>"`, "amd-zen4-2s-256c-512t"})
	}
}

// Parsing a parsed machine again gives the same machine: a share link or
// saved copy of a derived machine is stable.
func TestBaseRoundTrip(t *testing.T) {
	s, err := ParseMachine([]byte(`{"name": "x", "kind": "machine", "base": "amd-zen4-2s-256c-512t", "topology": {"sockets": 4}}`), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseMachine(data, "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, again) {
		t.Errorf("round trip:\n%+v\n%+v", s, again)
	}
}

// An embedded preset may not have a base (resolving it would load the
// registry being loaded).
func TestEmbeddedPresetRefusesBase(t *testing.T) {
	r := loadFS(fstest.MapFS{"machines/x.json": {Data: []byte(`{"name": "x", "kind": "machine", "base": "intel-2s-44c-88t"}`)}})
	if r.err == nil || !strings.Contains(r.err.Error(), "x.json: field base") {
		t.Errorf("loader error %v, want base refused", r.err)
	}
}
