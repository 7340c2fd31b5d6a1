package workload

import (
	"fmt"

	"schedplay/engine"
	"schedplay/engine/cpumask"
)

// hog is a CPU hog: `while(1);`, never blocking. Placement pins hogs one
// per core (the first allowed thread of each core, as in Parth Shah's
// "44 tasks pinned to any CPU in each core" setup) or one per CPU, or
// leaves them free for the scheduler to place.
func init() {
	register(&Kind{
		Name: "hog",
		Doc:  "while(1) CPU hogs; optional pinning one per core or one per CPU",
		Keys: []Key{
			{Name: "n", Type: IntKey, Default: "1", Min: 1, Max: 8192, Doc: "number of hog threads"},
			{Name: "place", Type: EnumKey, Default: "free", Values: []string{"free", "core", "cpu"},
				Doc: "free: scheduler places them; core: hog i pinned to the first allowed thread of the i-th core; cpu: hog i pinned to the i-th allowed CPU"},
		},
		build: buildHog,
	})
}

// forever is a burn longer than any simulation.
const forever = int64(1) << 60

func buildHog(b *Builder) error {
	b.Sim.SetBackground(b.ID) // load beside others: it does not hold a run open
	n := int(b.Int("n"))
	tp := b.Sim.Topology()
	allowed := b.Allowed
	if allowed.Len() == 0 {
		allowed = tp.All
	}
	var pins []int
	switch b.Str("place") {
	case "core":
		for core := 0; core < tp.NCores; core++ {
			for _, c := range tp.CoreCPUs[core] {
				if allowed.Test(c) {
					pins = append(pins, c)
					break
				}
			}
		}
	case "cpu":
		for c := allowed.First(); c >= 0; c = allowed.Next(c + 1) {
			pins = append(pins, c)
		}
	}
	if pins != nil && n > len(pins) {
		return fmt.Errorf("place=%s has %d slots for n=%d hogs", b.Str("place"), len(pins), n)
	}
	for i := 0; i < n; i++ {
		ts := b.TaskSpec(fmt.Sprintf("hog/%d", i), engine.ProgramFunc(func(*engine.Ctx) engine.Action {
			return engine.Run(forever)
		}))
		if pins != nil {
			ts.Allowed = cpumask.Of(tp.NCPU, pins[i])
			ts.ParentCPU = pins[i]
		}
		if _, err := b.Spawn(ts); err != nil {
			return err
		}
	}
	return nil
}
