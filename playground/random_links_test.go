package playground

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"schedplay/engine"
	"schedplay/engine/knob"
	"schedplay/engine/workload"
	"schedplay/presets"
)

// randomLink builds a share link from the knob table, the workload kinds'
// keys and the presets, with values drawn anywhere in their ranges (and
// now and then outside them).
func randomLink(r *rand.Rand) string {
	var parts []string
	ms := presets.Machines()
	parts = append(parts, "preset="+ms[r.IntN(len(ms))].Name)
	kinds := workload.Kinds()
	for n := 1 + r.IntN(2); n > 0; n-- {
		kind := kinds[r.IntN(len(kinds))]
		if kind == "rtapp" || kind == "trace" { // their files travel as b64=
			continue
		}
		k, _ := workload.Lookup(kind)
		var kv []string
		for _, key := range k.Keys {
			if r.IntN(3) != 0 || key.Type != workload.IntKey {
				continue
			}
			// Mostly small values (a run must stay small), sometimes the
			// bounds, sometimes just outside them.
			var v int64
			switch r.IntN(6) {
			case 0:
				v = key.Min
			case 1:
				v = key.Min - 1
			case 2:
				v = min(key.Max, key.Min+int64(r.IntN(4)))
			default:
				v = min(key.Max, max(key.Min, int64(r.IntN(8))))
			}
			kv = append(kv, key.Name+"="+strconv.FormatInt(v, 10))
		}
		spec := kind
		if len(kv) > 0 {
			spec += ":" + strings.Join(kv, ",")
		}
		parts = append(parts, "w="+spec)
	}
	for _, d := range knob.Table() {
		if r.IntN(8) != 0 {
			continue
		}
		var v int64
		switch d.Kind {
		case knob.Int:
			// Costs and tunables anywhere up to 10 ms (beyond that a run of a
			// few ms says nothing).
			hi := min(d.Max, max(d.Min, 10_000_000))
			v = d.Min + r.Int64N(hi-d.Min+1)
		default:
			v = d.Min + r.Int64N(d.Max-d.Min+1)
		}
		parts = append(parts, d.Name+"="+d.Format(v))
	}
	if r.IntN(3) == 0 {
		parts = append(parts, "ab=1", "b.SIS_CORE=0")
	}
	parts = append(parts, "seed="+strconv.Itoa(r.IntN(1000)))
	return "#" + strings.Join(parts, "&")
}

// Random links either are refused (and the page keeps its default) or
// build and run for a few simulated milliseconds with the engine's
// invariants checked after every event. A failure prints the generator
// seed that reproduces it (RANDOM_LINKS_SEED=N, RANDOM_LINKS_N=count).
func TestRandomLinksRunUnderInvariants(t *testing.T) {
	first, n := uint64(1), 200
	if s := os.Getenv("RANDOM_LINKS_SEED"); s != "" {
		first, _ = strconv.ParseUint(s, 10, 64)
	}
	if s := os.Getenv("RANDOM_LINKS_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	accepted := 0
	for seed := first; seed < first+uint64(n); seed++ {
		link := randomLink(rand.New(rand.NewPCG(seed, 7)))
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("RANDOM_LINKS_SEED=%d: link %s panicked: %v", seed, link, p)
				}
			}()
			st, err := Parse(link)
			if err != nil {
				return
			}
			accepted++
			arms := 1
			if st.AB {
				arms = 2
			}
			for a := 0; a < arms; a++ {
				cfg := st.Config(a)
				cfg.Debug = true
				sim, err := cfg.Build()
				if err != nil {
					continue // limits found while building: refused, not a crash
				}
				for i := 0; i < 20000; i++ {
					if next := sim.NextEventTime(); next < 0 || next > 3*engine.Millisecond || !sim.Step() {
						break
					}
				}
			}
		}()
	}
	if accepted == 0 {
		t.Fatalf("none of %d random links was accepted: the generator tests nothing", n)
	}
	t.Log(fmt.Sprintf("%d of %d random links accepted and run", accepted, n))
}
