package policy

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"schedplay/engine"
)

// The predeclared names of a policy file. Every built-in that reads a
// CPU's runtime state (idle, nr_running, polling, cstate, util, curr_*)
// refuses a CPU the call has not probed (probe, or a kernel stage's
// probes): "probe it first".
var predeclared = starlark.StringDict{
	// probing and runtime state
	"probe":             fn1cpuBool("probe", (*engine.WakeView).Probe),
	"idle":              fn1cpuBool("idle", (*engine.WakeView).Idle),
	"polling":           fn1cpuBool("polling", (*engine.WakeView).Polling),
	"nr_running":        fn1cpuInt("nr_running", (*engine.WakeView).NrRunning),
	"cstate":            fn1cpuInt("cstate", (*engine.WakeView).CState),
	"util":              fn1cpuInt64("util", (*engine.WakeView).Util),
	"curr_class":        currFn("curr_class", func(c engine.CurrInfo) starlark.Value { return starlark.String(c.Class) }),
	"curr_nice":         currFn("curr_nice", func(c engine.CurrInfo) starlark.Value { return starlark.MakeInt(c.Nice) }),
	"curr_latency_nice": currFn("curr_latency_nice", func(c engine.CurrInfo) starlark.Value { return starlark.MakeInt(c.LatencyNice) }),
	"probes":            fn0("probes", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt(v.Probes()) }),

	// topology
	"ncpu":           fn0("ncpu", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt(v.NCPU()) }),
	"smt_present":    fn0("smt_present", func(v *engine.WakeView) starlark.Value { return starlark.Bool(v.SMTPresent()) }),
	"core_of":        fn1cpuInt("core_of", (*engine.WakeView).CoreOf),
	"llc_of":         fn1cpuInt("llc_of", (*engine.WakeView).LLCOf),
	"node_of":        fn1cpuInt("node_of", (*engine.WakeView).NodeOf),
	"siblings":       fn1List("siblings", (*engine.WakeView).Siblings),
	"llc_cpus":       fn1List("llc_cpus", (*engine.WakeView).LLCCPUs),
	"cores_of":       fn1List("cores_of", (*engine.WakeView).CoresOfLLC),
	"has_llc":        fn1cpuBool("has_llc", func(v *engine.WakeView, c int) (bool, error) { return v.HasLLC(c), nil }),
	"share_cache":    starlark.NewBuiltin("share_cache", shareCache),
	"wrap":           starlark.NewBuiltin("wrap", wrapList),
	"has_idle_cores": fn1cpuBool("has_idle_cores", (*engine.WakeView).HasIdleCores),
	"set_idle_cores": starlark.NewBuiltin("set_idle_cores", setIdleCores),
	"nr_idle_scan":   fn1cpuInt64("nr_idle_scan", (*engine.WakeView).NrIdleScan),

	// the waker's runqueue and the search's clock
	"avg_idle":             fn0("avg_idle", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt64(v.AvgIdle()) }),
	"avg_scan_cost":        fn0("avg_scan_cost", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt64(v.AvgScanCost()) }),
	"this_nr_running":      fn0("this_nr_running", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt(v.ThisNrRunning()) }),
	"local_clock":          fn0("local_clock", func(v *engine.WakeView) starlark.Value { return starlark.MakeInt64(v.LocalClock()) }),
	"update_avg_scan_cost": starlark.NewBuiltin("update_avg_scan_cost", updateAvgScanCost),
	"scan_begin":           starlark.NewBuiltin("scan_begin", scanBegin),
	"scan_end":             starlark.NewBuiltin("scan_end", scanEnd),
	"knob":                 starlark.NewBuiltin("knob", knobFn),

	// persistent state
	"cpu_state":     starlark.NewBuiltin("cpu_state", slotGet((*engine.WakeView).CPUSlot)),
	"set_cpu_state": starlark.NewBuiltin("set_cpu_state", slotSet((*engine.WakeView).SetCPUSlot)),
	"llc_state":     starlark.NewBuiltin("llc_state", slotGet((*engine.WakeView).LLCSlot)),
	"set_llc_state": starlark.NewBuiltin("set_llc_state", slotSet((*engine.WakeView).SetLLCSlot)),

	"kernel": &starlarkstruct.Module{Name: "kernel", Members: starlark.StringDict{
		"select_idle_sibling": starlark.NewBuiltin("kernel.select_idle_sibling", kernelSIS),
		"select_idle_core":    starlark.NewBuiltin("kernel.select_idle_core", kernelCore),
		"select_idle_cpu":     starlark.NewBuiltin("kernel.select_idle_cpu", kernelCPU),
		"select_idle_smt":     starlark.NewBuiltin("kernel.select_idle_smt", kernelSMT),
	}},
}

// Builtins lists the predeclared names, sorted (documentation, editors).
func Builtins() []string {
	var out []string
	for k := range predeclared {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func view(th *starlark.Thread, name string) (*engine.WakeView, error) {
	in, _ := th.Local(localKey).(*instance)
	if in == nil || in.v == nil {
		return nil, fmt.Errorf("only inside %s (not at the top level)", EntryPoint)
	}
	return in.v, nil
}

type builtinFn = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

func oneInt(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (int, error) {
	var c int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &c); err != nil {
		return 0, err
	}
	return c, nil
}

func fn0(name string, f func(*engine.WakeView) starlark.Value) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		v, err := view(th, name)
		if err != nil {
			return nil, err
		}
		return f(v), nil
	})
}

func with1(name string, f func(*engine.WakeView, int) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := oneInt(b, args, kwargs)
		if err != nil {
			return nil, err
		}
		v, err := view(th, name)
		if err != nil {
			return nil, err
		}
		return f(v, c)
	})
}

func fn1cpuBool(name string, f func(*engine.WakeView, int) (bool, error)) *starlark.Builtin {
	return with1(name, func(v *engine.WakeView, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.Bool(r), err
	})
}

func fn1cpuInt(name string, f func(*engine.WakeView, int) (int, error)) *starlark.Builtin {
	return with1(name, func(v *engine.WakeView, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.MakeInt(r), err
	})
}

func fn1cpuInt64(name string, f func(*engine.WakeView, int) (int64, error)) *starlark.Builtin {
	return with1(name, func(v *engine.WakeView, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.MakeInt64(r), err
	})
}

func intList(xs []int) *starlark.List {
	vals := make([]starlark.Value, len(xs))
	for i, x := range xs {
		vals[i] = starlark.MakeInt(x)
	}
	return starlark.NewList(vals)
}

func fn1List(name string, f func(*engine.WakeView, int) ([]int, error)) *starlark.Builtin {
	return with1(name, func(v *engine.WakeView, c int) (starlark.Value, error) {
		r, err := f(v, c)
		if err != nil {
			return nil, err
		}
		return intList(r), nil
	})
}

func currFn(name string, f func(engine.CurrInfo) starlark.Value) *starlark.Builtin {
	return with1(name, func(v *engine.WakeView, c int) (starlark.Value, error) {
		ci, err := v.Curr(c)
		if err != nil {
			return nil, err
		}
		return f(ci), nil
	})
}

func shareCache(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, c int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &a, &c); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	return starlark.Bool(v.ShareCache(a, c)), nil
}

// wrapList is wrap(cpus, start): cpus (ascending) from the first one at
// or after start, then the ones before it — for_each_cpu_wrap's order.
func wrapList(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *starlark.List
	var start int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &l, &start); err != nil {
		return nil, err
	}
	n := l.Len()
	i := 0
	for ; i < n; i++ {
		c, err := starlark.AsInt32(l.Index(i))
		if err != nil {
			return nil, fmt.Errorf("wrap: element %d: %v", i, err)
		}
		if c >= start {
			break
		}
	}
	if i == n {
		i = 0
	}
	vals := make([]starlark.Value, 0, n)
	for k := 0; k < n; k++ {
		vals = append(vals, l.Index((i+k)%n))
	}
	return starlark.NewList(vals), nil
}

func setIdleCores(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var c int
	var val bool
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &c, &val); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	return starlark.None, v.SetIdleCores(c, val)
}

func updateAvgScanCost(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ns int64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &ns); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	v.UpdateAvgScanCost(ns)
	return starlark.None, nil
}

func scanBegin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nr int64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &nr); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	v.ScanBegin(nr)
	return starlark.None, nil
}

func scanEnd(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	cut := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "cut_short?", &cut); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	return starlark.None, v.ScanEnd(cut)
}

func knobFn(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	x, isBool, err := v.Knob(name)
	if isBool {
		return starlark.Bool(x != 0), err
	}
	return starlark.MakeInt64(x), err
}

func slotGet(f func(*engine.WakeView, int) (int64, error)) builtinFn {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := oneInt(b, args, kwargs)
		if err != nil {
			return nil, err
		}
		v, err := view(th, b.Name())
		if err != nil {
			return nil, err
		}
		x, err := f(v, c)
		return starlark.MakeInt64(x), err
	}
}

func slotSet(f func(*engine.WakeView, int, int64) error) builtinFn {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var c int
		var x int64
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &c, &x); err != nil {
			return nil, err
		}
		v, err := view(th, b.Name())
		if err != nil {
			return nil, err
		}
		return starlark.None, f(v, c, x)
	}
}

func kernelSIS(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	c, st := v.KernelSelectIdleSibling()
	return starlark.Tuple{starlark.MakeInt(c), starlark.String(st.String())}, nil
}

func kernelCore(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t, err := oneInt(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	c, err := v.KernelSelectIdleCore(t)
	return starlark.MakeInt(c), err
}

// kernelCPU is kernel.select_idle_cpu(target, has_idle_core=False):
// (cpu or -1, stage).
func kernelCPU(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t int
	hic := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "target", &t, "has_idle_core?", &hic); err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	c, st, err := v.KernelSelectIdleCPU(t, hic)
	if err != nil {
		return nil, err
	}
	return starlark.Tuple{starlark.MakeInt(c), starlark.String(st.String())}, nil
}

func kernelSMT(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t, err := oneInt(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	v, err := view(th, b.Name())
	if err != nil {
		return nil, err
	}
	c, err := v.KernelSelectIdleSMT(t)
	return starlark.MakeInt(c), err
}

// taskValue is the policy's p: the wakee of the current call.
type taskValue struct{ in *instance }

var taskAttrs = []string{"allowed", "allowed_cpus", "id", "latency_nice", "nice", "prev", "recent_used_cpu", "sync", "target", "util", "wakee_flips", "waker_cpu", "waker_flips", "waker_per_cpu_kthread"}

func (t *taskValue) String() string        { return "<task>" }
func (t *taskValue) Type() string          { return "task" }
func (t *taskValue) Freeze()               {}
func (t *taskValue) Truth() starlark.Bool  { return true }
func (t *taskValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: task") }
func (t *taskValue) AttrNames() []string   { return taskAttrs }

func (t *taskValue) Attr(name string) (starlark.Value, error) {
	v := t.in.v
	if v == nil {
		return nil, fmt.Errorf("task.%s: the task is only valid during its call", name)
	}
	switch name {
	case "id":
		return starlark.MakeInt(int(v.Task())), nil
	case "prev":
		return starlark.MakeInt(v.Prev()), nil
	case "target":
		return starlark.MakeInt(v.Target()), nil
	case "waker_cpu":
		return starlark.MakeInt(v.WakerCPU()), nil
	case "sync":
		return starlark.Bool(v.Sync()), nil
	case "nice":
		return starlark.MakeInt(v.Nice()), nil
	case "latency_nice":
		return starlark.MakeInt(v.LatencyNice()), nil
	case "util":
		return starlark.MakeInt64(v.TaskUtil()), nil
	case "wakee_flips":
		return starlark.MakeInt64(v.WakeeFlips()), nil
	case "waker_per_cpu_kthread":
		return starlark.Bool(v.WakerPerCPUKthread()), nil
	case "waker_flips":
		return starlark.MakeInt64(v.WakerFlips()), nil
	case "recent_used_cpu":
		return starlark.MakeInt(v.RecentUsedCPU()), nil
	case "allowed_cpus":
		return intList(v.AllowedCPUs()), nil
	case "allowed":
		return starlark.NewBuiltin("allowed", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			c, err := oneInt(b, args, kwargs)
			if err != nil {
				return nil, err
			}
			return starlark.Bool(v.Allowed(c)), nil
		}), nil
	}
	return nil, nil
}

// SetField lets a policy update p.recent_used_cpu, as the kernel's
// select_idle_sibling does.
func (t *taskValue) SetField(name string, val starlark.Value) error {
	if name != "recent_used_cpu" {
		return fmt.Errorf("task.%s is read-only (only recent_used_cpu can be set)", name)
	}
	if t.in.v == nil {
		return fmt.Errorf("task.%s: the task is only valid during its call", name)
	}
	c, err := starlark.AsInt32(val)
	if err != nil {
		return fmt.Errorf("task.recent_used_cpu: %v", err)
	}
	return t.in.v.SetRecentUsedCPU(c)
}
