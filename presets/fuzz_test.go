package presets

import (
	"strings"
	"testing"

	"schedplay/engine/machine"
)

// FuzzMachineJSON: a machine file is either refused with an error naming
// the file (and the field), or yields a spec the topology builder takes.
func FuzzMachineJSON(f *testing.F) {
	// A real preset without its long notes (the fuzzer mutates bytes).
	f.Add([]byte(`{"name":"m","kind":"machine","topology":{"sockets":2,"cores_per_socket":4,"threads_per_core":2,"cores_per_llc":2,"numbering":"interleaved"},"smt_throughput":[1,1.2],"idle_states":[{"name":"POLL","polling":true},{"name":"C1","exit_latency_us":1,"target_residency_us":2,"measured_exit_ns":500}],"cache":{"core_private_kb":512,"llc_kb":4096},"costs":{"probe_ns":10},"cost_notes":{"probe_ns":"assumed: x"}}`))
	f.Add([]byte(`{"name":"x","kind":"machine"}`))
	f.Add([]byte(`{"name":"x","kind":"machine","topology":{"sockets":1,"cores_per_socket":4096,"threads_per_core":8}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseMachine(data, "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if s.NumCPUs() > machine.MaxCPUs {
			t.Fatalf("accepted %d CPUs", s.NumCPUs())
		}
		if _, err := machine.Build(s); err != nil {
			t.Fatalf("accepted spec does not build: %v", err)
		}
	})
}
