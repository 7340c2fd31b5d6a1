package policy

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"

	"go.starlark.net/starlark"

	"schedplay/engine"
	"schedplay/engine/knob"
)

// The predeclared names of a policy file. Every built-in that reads a
// CPU's runtime state (idle, nr_running, polling, cstate, util, curr_*)
// refuses a CPU the call has not probed (probe, or a kernel stage's
// probes): "probe it first".
//
// Each simulation's instance has its own set of built-ins, bound to it
// (New runs the file's top level again with them), so that a built-in
// reaches the wakeup's view through a pointer, not a thread-local map.
// The topology lists (siblings, llc_cpus, cores_of, and wrap of one of
// them) are built once per instance and frozen: read-only, list(l) for a
// copy to modify.

// predeclaredNames is the set of predeclared names (the compiler's
// isPredeclared).
var predeclaredNames = func() map[string]bool {
	m := map[string]bool{}
	for k := range (&instance{}).predeclared() {
		m[k] = true
	}
	return m
}()

// Builtins lists the predeclared names, sorted (documentation, editors);
// not the faster len, min and max, which are Starlark's own.
func Builtins() []string {
	var out []string
	for k := range predeclaredNames {
		if _, universal := fastUniversal[k]; !universal {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// fastUniversal shadows Starlark's len, min and max with versions that
// answer the common case (a list or tuple; two ints) without the
// universal built-in's generic unpacking and iteration (min(a, b) costs
// 400 ns there), and hand every other case to it, so the results and
// errors are Starlark's own.
var fastUniversal = starlark.StringDict{
	"len": starlark.NewBuiltin("len", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 1 && len(kwargs) == 0 {
			switch x := args[0].(type) {
			case *starlark.List:
				return starlark.MakeInt(x.Len()), nil
			case starlark.Tuple:
				return starlark.MakeInt(len(x)), nil
			}
		}
		return starlark.Universe["len"].(*starlark.Builtin).CallInternal(th, args, kwargs)
	}),
	"min": minMax("min", -1),
	"max": minMax("max", 1),
}

func minMax(name string, sign int) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 2 && len(kwargs) == 0 {
			if x, ok := args[0].(starlark.Int); ok {
				if y, ok := args[1].(starlark.Int); ok {
					a, ok1 := x.Int64()
					c, ok2 := y.Int64()
					if ok1 && ok2 {
						// the first of the extreme values, as Starlark's
						if (sign < 0 && c < a) || (sign > 0 && c > a) {
							return y, nil
						}
						return x, nil
					}
				}
			}
		}
		return starlark.Universe[name].(*starlark.Builtin).CallInternal(th, args, kwargs)
	})
}

var errOutside = fmt.Errorf("only inside %s, %s or %s (not at the top level)", EntryPoint, CPUEntryPoint, NewidleEntryPoint)

type builtinFn = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

// oneInt unpacks a single int argument; the fast path takes a small int
// without UnpackPositionalArgs (the same checks, the same errors).
func oneInt(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (int, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		if i, ok := args[0].(starlark.Int); ok {
			if x, ok := i.Int64(); ok && x == int64(int(x)) {
				return int(x), nil
			}
		}
	}
	var c int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &c); err != nil {
		return 0, err
	}
	return c, nil
}

func twoInts(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (int, int, error) {
	if len(args) == 2 && len(kwargs) == 0 {
		if i, ok := args[0].(starlark.Int); ok {
			if j, ok := args[1].(starlark.Int); ok {
				x, ok1 := i.Int64()
				y, ok2 := j.Int64()
				if ok1 && ok2 && x == int64(int(x)) && y == int64(int(y)) {
					return int(x), int(y), nil
				}
			}
		}
	}
	var a, c int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &a, &c); err != nil {
		return 0, 0, err
	}
	return a, c, nil
}

func (in *instance) fn0(name string, f func(*engine.View) starlark.Value) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) != 0 || len(kwargs) != 0 {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
		}
		if in.mv == nil {
			return nil, errOutside
		}
		return f(in.mv), nil
	})
}

func (in *instance) with1(name string, f func(*engine.View, int) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := oneInt(b, args, kwargs)
		if err != nil {
			return nil, err
		}
		if in.mv == nil {
			return nil, errOutside
		}
		return f(in.mv, c)
	})
}

func (in *instance) fn1cpuBool(name string, f func(*engine.View, int) (bool, error)) *starlark.Builtin {
	return in.with1(name, func(v *engine.View, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.Bool(r), err
	})
}

func (in *instance) fn1cpuInt(name string, f func(*engine.View, int) (int, error)) *starlark.Builtin {
	return in.with1(name, func(v *engine.View, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.MakeInt(r), err
	})
}

func (in *instance) fn1cpuInt64(name string, f func(*engine.View, int) (int64, error)) *starlark.Builtin {
	return in.with1(name, func(v *engine.View, c int) (starlark.Value, error) {
		r, err := f(v, c)
		return starlark.MakeInt64(r), err
	})
}

// fn1List is a topology list of argument c, built once per key(c) and
// frozen.
func (in *instance) fn1List(name string, key func(*engine.View, int) (int, error), f func(*engine.View, int) ([]int, error)) *starlark.Builtin {
	var cache []*starlark.List
	return in.with1(name, func(v *engine.View, c int) (starlark.Value, error) {
		k, err := key(v, c)
		if err != nil {
			return nil, err
		}
		if k >= 0 && k < len(cache) && cache[k] != nil {
			return cache[k], nil
		}
		r, err := f(v, c)
		if err != nil {
			return nil, err
		}
		l := in.topoList(r)
		if k >= 0 {
			if k >= len(cache) {
				cache = append(cache, make([]*starlark.List, k+1-len(cache))...)
			}
			cache[k] = l
		}
		return l, nil
	})
}

// topoList is a frozen list of xs that wrap knows (wrapCache).
func (in *instance) topoList(xs []int) *starlark.List {
	l := intList(xs)
	l.Freeze()
	if in.wraps == nil {
		in.wraps = map[*starlark.List][]*starlark.List{}
	}
	in.wraps[l] = make([]*starlark.List, len(xs))
	return l
}

func intList(xs []int) *starlark.List {
	vals := make([]starlark.Value, len(xs))
	for i, x := range xs {
		vals[i] = starlark.MakeInt(x)
	}
	return starlark.NewList(vals)
}

func (in *instance) currFn(name string, f func(engine.CurrInfo) starlark.Value) *starlark.Builtin {
	return in.with1(name, func(v *engine.View, c int) (starlark.Value, error) {
		ci, err := v.Curr(c)
		if err != nil {
			return nil, err
		}
		return f(ci), nil
	})
}

// bound makes a built-in whose function reaches the instance's view.
func (in *instance) bound(name string, f func(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if in.mv == nil {
			// Arguments first, as before: their errors come first.
			if _, err := f(nil, b, args, kwargs); err != nil && !errors.Is(err, errOutside) {
				return nil, err
			}
			return nil, errOutside
		}
		return f(in.mv, b, args, kwargs)
	})
}

// wbound is bound for a built-in of the wakeup hooks only (the scan, the
// kernel's wakeup stages): refused in newidle_balance.
func (in *instance) wbound(name string, f func(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if in.v == nil {
			if _, err := f(nil, b, args, kwargs); err != nil && !errors.Is(err, errOutside) {
				return nil, err
			}
			if in.mv != nil {
				return nil, errWakeOnly
			}
			return nil, errOutside
		}
		return f(in.v, b, args, kwargs)
	})
}

func (in *instance) predeclared() starlark.StringDict {
	llcKey := func(v *engine.View, c int) (int, error) { return v.LLCOf(c) }
	coreKey := func(v *engine.View, c int) (int, error) { return v.CoreOf(c) }
	llcIdx := func(v *engine.View, l int) (int, error) { return l, nil }
	nodeKey := func(v *engine.View, c int) (int, error) { return v.NodeOf(c) }
	d := starlark.StringDict{
		// probing and runtime state
		"probe":             in.fn1cpuBool("probe", (*engine.View).Probe),
		"idle":              in.fn1cpuBool("idle", (*engine.View).Idle),
		"polling":           in.fn1cpuBool("polling", (*engine.View).Polling),
		"nr_running":        in.fn1cpuInt("nr_running", (*engine.View).NrRunning),
		"cstate":            in.fn1cpuInt("cstate", (*engine.View).CState),
		"util":              in.fn1cpuInt64("util", (*engine.View).Util),
		"curr_class":        in.currFn("curr_class", func(c engine.CurrInfo) starlark.Value { return starlark.String(c.Class) }),
		"curr_nice":         in.currFn("curr_nice", func(c engine.CurrInfo) starlark.Value { return starlark.MakeInt(c.Nice) }),
		"curr_latency_nice": in.currFn("curr_latency_nice", func(c engine.CurrInfo) starlark.Value { return starlark.MakeInt(c.LatencyNice) }),
		"probes":            in.fn0("probes", func(v *engine.View) starlark.Value { return starlark.MakeInt(v.Probes()) }),

		// topology
		"ncpu":           in.fn0("ncpu", func(v *engine.View) starlark.Value { return starlark.MakeInt(v.NCPU()) }),
		"smt_present":    in.fn0("smt_present", func(v *engine.View) starlark.Value { return starlark.Bool(v.SMTPresent()) }),
		"core_of":        in.fn1cpuInt("core_of", (*engine.View).CoreOf),
		"llc_of":         in.fn1cpuInt("llc_of", (*engine.View).LLCOf),
		"node_of":        in.fn1cpuInt("node_of", (*engine.View).NodeOf),
		"siblings":       in.fn1List("siblings", coreKey, (*engine.View).Siblings),
		"llc_cpus":       in.fn1List("llc_cpus", llcKey, (*engine.View).LLCCPUs),
		"cores_of":       in.fn1List("cores_of", llcIdx, (*engine.View).CoresOfLLC),
		"has_llc":        in.fn1cpuBool("has_llc", func(v *engine.View, c int) (bool, error) { return v.HasLLC(c), nil }),
		"share_cache":    in.bound("share_cache", shareCache),
		"wrap":           starlark.NewBuiltin("wrap", in.wrapList),
		"has_idle_cores": in.fn1cpuBool("has_idle_cores", (*engine.View).HasIdleCores),
		"set_idle_cores": in.bound("set_idle_cores", setIdleCores),
		"nr_idle_scan":   in.fn1cpuInt64("nr_idle_scan", (*engine.View).NrIdleScan),
		"node_llcs":      in.fn1List("node_llcs", nodeKey, (*engine.View).NodeLLCs),

		// the LLC's idle bitmasks (a poc-selector's words) and bit helpers
		"idle_mask":      in.with1("idle_mask", maskFn((*engine.View).IdleMask)),
		"idle_core_mask": in.with1("idle_core_mask", maskFn((*engine.View).IdleCoreMask)),
		"popcount":       starlark.NewBuiltin("popcount", popcount),
		"nth_bit":        starlark.NewBuiltin("nth_bit", nthBit),

		// the waker's runqueue and the search's clock
		"avg_idle":             in.fn0("avg_idle", func(v *engine.View) starlark.Value { return starlark.MakeInt64(v.AvgIdle()) }),
		"avg_scan_cost":        in.fn0("avg_scan_cost", func(v *engine.View) starlark.Value { return starlark.MakeInt64(v.AvgScanCost()) }),
		"this_nr_running":      in.fn0("this_nr_running", func(v *engine.View) starlark.Value { return starlark.MakeInt(v.ThisNrRunning()) }),
		"local_clock":          in.fn0("local_clock", func(v *engine.View) starlark.Value { return starlark.MakeInt64(v.LocalClock()) }),
		"update_avg_scan_cost": in.wbound("update_avg_scan_cost", updateAvgScanCost),
		"scan_begin":           in.wbound("scan_begin", scanBegin),
		"scan_end":             in.wbound("scan_end", scanEnd),
		"knob":                 in.bound("knob", in.knobFn),

		// persistent state
		"rand": in.with1("rand", func(v *engine.View, n int) (starlark.Value, error) {
			r, err := v.Rand(int64(n))
			return starlark.MakeInt64(r), err
		}),
		"cpu_state":     in.bound("cpu_state", slotGet((*engine.View).CPUSlot)),
		"set_cpu_state": in.bound("set_cpu_state", slotSet((*engine.View).SetCPUSlot)),
		"llc_state":     in.bound("llc_state", slotGet((*engine.View).LLCSlot)),
		"set_llc_state": in.bound("set_llc_state", slotSet((*engine.View).SetLLCSlot)),

		"len": fastUniversal["len"],
		"min": fastUniversal["min"],
		"max": fastUniversal["max"],

		"kernel": &kernelModule{
			sis:     in.wbound("kernel.select_idle_sibling", in.kernelSIS),
			core:    in.wbound("kernel.select_idle_core", kernelCore),
			cpu:     in.wbound("kernel.select_idle_cpu", in.kernelCPU),
			smt:     in.wbound("kernel.select_idle_smt", kernelSMT),
			newidle: in.bbound("kernel.newidle_balance", kernelNewidle),
		},
	}
	in.newidleBuiltins(d)
	return d
}

// kernelModule is the predeclared kernel: the era's stages (a fixed set
// of attributes, looked up without a map).
type kernelModule struct{ sis, core, cpu, smt, newidle *starlark.Builtin }

var kernelAttrs = []string{"newidle_balance", "select_idle_core", "select_idle_cpu", "select_idle_sibling", "select_idle_smt"}

func (m *kernelModule) String() string        { return `<module "kernel">` }
func (m *kernelModule) Type() string          { return "module" }
func (m *kernelModule) Freeze()               {}
func (m *kernelModule) Truth() starlark.Bool  { return true }
func (m *kernelModule) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: module") }
func (m *kernelModule) AttrNames() []string   { return kernelAttrs }
func (m *kernelModule) Attr(name string) (starlark.Value, error) {
	switch name {
	case "select_idle_sibling":
		return m.sis, nil
	case "select_idle_core":
		return m.core, nil
	case "select_idle_cpu":
		return m.cpu, nil
	case "select_idle_smt":
		return m.smt, nil
	case "newidle_balance":
		return m.newidle, nil
	}
	return nil, nil
}

func shareCache(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, c, err := twoInts(b, args, kwargs)
	if err != nil || v == nil {
		return nil, err
	}
	return starlark.Bool(v.ShareCache(a, c)), nil
}

// wrapList is wrap(cpus, start): cpus (ascending) from the first one at
// or after start, then the ones before it — for_each_cpu_wrap's order. Of
// a topology list (frozen), the result is built once per start and
// frozen too; of any other list it is a new list.
func (in *instance) wrapList(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *starlark.List
	var start int
	if len(args) == 2 && len(kwargs) == 0 {
		l, _ = args[0].(*starlark.List)
		if i, ok := args[1].(starlark.Int); ok && l != nil {
			if x, ok := i.Int64(); ok && x == int64(int(x)) {
				start = int(x)
			} else {
				l = nil
			}
		} else {
			l = nil
		}
	}
	if l == nil {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &l, &start); err != nil {
			return nil, err
		}
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
	cache, cached := in.wraps[l]
	if cached && cache[i] != nil {
		return cache[i], nil
	}
	vals := make([]starlark.Value, 0, n)
	for k := 0; k < n; k++ {
		vals = append(vals, l.Index((i+k)%n))
	}
	out := starlark.NewList(vals)
	if cached {
		out.Freeze()
		cache[i] = out
	}
	return out, nil
}

func setIdleCores(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var c int
	var val bool
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &c, &val); err != nil || v == nil {
		return nil, err
	}
	return starlark.None, v.SetIdleCores(c, val)
}

func updateAvgScanCost(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	ns, err := oneInt(b, args, kwargs)
	if err != nil || v == nil {
		return nil, err
	}
	v.UpdateAvgScanCost(int64(ns))
	return starlark.None, nil
}

func scanBegin(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nr int64
	if len(args) == 1 && len(kwargs) == 0 {
		if i, ok := args[0].(starlark.Int); ok {
			if x, ok := i.Int64(); ok {
				if v == nil {
					return nil, nil
				}
				v.ScanBegin(x)
				return starlark.None, nil
			}
		}
	}
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &nr); err != nil || v == nil {
		return nil, err
	}
	v.ScanBegin(nr)
	return starlark.None, nil
}

func scanEnd(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	cut := false
	if len(args) != 0 || len(kwargs) != 0 {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "cut_short?", &cut); err != nil {
			return nil, err
		}
	}
	if v == nil {
		return nil, nil
	}
	return starlark.None, v.ScanEnd(cut)
}

type knobRef struct {
	id     knob.ID
	isBool bool
}

func (in *instance) knobFn(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if len(args) == 1 && len(kwargs) == 0 {
		s, ok := args[0].(starlark.String)
		name = string(s)
		if ok && v != nil {
			if r, ok := in.knobs[name]; ok {
				x := v.KnobByID(r.id)
				if r.isBool {
					return starlark.Bool(x != 0), nil
				}
				return starlark.MakeInt64(x), nil
			}
		}
	}
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil || v == nil {
		return nil, err
	}
	x, isBool, err := v.Knob(name)
	if err != nil {
		return nil, err
	}
	if id, ok := knob.Lookup(name); ok {
		if in.knobs == nil {
			in.knobs = map[string]knobRef{}
		}
		in.knobs[name] = knobRef{id, isBool}
	}
	if isBool {
		return starlark.Bool(x != 0), nil
	}
	return starlark.MakeInt64(x), nil
}

func slotGet(f func(*engine.View, int) (int64, error)) func(*engine.View, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := oneInt(b, args, kwargs)
		if err != nil || v == nil {
			return nil, err
		}
		x, err := f(v, c)
		return starlark.MakeInt64(x), err
	}
}

func slotSet(f func(*engine.View, int, int64) error) func(*engine.View, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(v *engine.View, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var c int
		var x int64
		if len(args) == 2 && len(kwargs) == 0 {
			i, ok1 := args[0].(starlark.Int)
			j, ok2 := args[1].(starlark.Int)
			if ok1 && ok2 {
				ci, ok1 := i.Int64()
				xi, ok2 := j.Int64()
				if ok1 && ok2 && ci == int64(int(ci)) {
					if v == nil {
						return nil, nil
					}
					return starlark.None, f(v, int(ci), xi)
				}
			}
		}
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &c, &x); err != nil || v == nil {
			return nil, err
		}
		return starlark.None, f(v, c, x)
	}
}

// stageTuple is (cpu, stage's name), built once per pair and frozen;
// (-1, stage) is kept after the CPUs' row.
func (in *instance) stageTuple(c int, st engine.Stage) starlark.Value {
	if c >= -1 && int(st) < len(in.tuples) {
		row := in.tuples[st]
		if row == nil {
			row = make([]starlark.Tuple, in.ncpu+1)
			in.tuples[st] = row
		}
		i := c
		if c < 0 {
			i = in.ncpu
		}
		if i < len(row) {
			if t := row[i]; t != nil {
				return t
			}
			t := starlark.Tuple{starlark.MakeInt(c), stageNames[st]}
			row[i] = t
			return t
		}
	}
	return starlark.Tuple{starlark.MakeInt(c), starlark.String(st.String())}
}

func (in *instance) kernelSIS(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 0 || len(kwargs) != 0 {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
	}
	if v == nil {
		return nil, nil
	}
	c, st := v.KernelSelectIdleSibling()
	return in.stageTuple(c, st), nil
}

func kernelCore(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t, err := oneInt(b, args, kwargs)
	if err != nil || v == nil {
		return nil, err
	}
	c, err := v.KernelSelectIdleCore(t)
	return starlark.MakeInt(c), err
}

// kernelCPU is kernel.select_idle_cpu(target, has_idle_core=False):
// (cpu or -1, stage).
func (in *instance) kernelCPU(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t int
	hic := false
	fast := false
	if len(kwargs) == 0 && (len(args) == 1 || len(args) == 2) {
		// the common calls: (target) and (target, has_idle_core)
		if i, ok := args[0].(starlark.Int); ok {
			if x, ok := i.Int64(); ok && x == int64(int(x)) {
				t, fast = int(x), true
				if len(args) == 2 {
					bv, ok := args[1].(starlark.Bool)
					hic, fast = bool(bv), ok
				}
			}
		}
	}
	switch {
	case fast:
	default:
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "target", &t, "has_idle_core?", &hic); err != nil {
			return nil, err
		}
	}
	if v == nil {
		return nil, nil
	}
	c, st, err := v.KernelSelectIdleCPU(t, hic)
	if err != nil {
		return nil, err
	}
	return in.stageTuple(c, st), nil
}

func kernelSMT(v *engine.WakeView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t, err := oneInt(b, args, kwargs)
	if err != nil || v == nil {
		return nil, err
	}
	c, err := v.KernelSelectIdleSMT(t)
	return starlark.MakeInt(c), err
}

// stageNames are the stages' names as Starlark strings (boxed once).
var stageNames = func() []starlark.Value {
	names := engine.StageNames()
	out := make([]starlark.Value, len(names))
	for i, n := range names {
		out[i] = starlark.String(n)
	}
	return out
}()

// taskValue is the policy's p: the wakee of the current call.
type taskValue struct {
	in      *instance
	allowed *starlark.Builtin
}

var taskAttrs = []string{"allowed", "allowed_cpus", "id", "latency_nice", "nice", "prev", "recent_used_cpu", "sync", "target", "util", "wakee_flips", "waker_cpu", "waker_flips", "waker_per_cpu_kthread"}

func (t *taskValue) String() string        { return "<task>" }
func (t *taskValue) Type() string          { return "task" }
func (t *taskValue) Freeze()               {}
func (t *taskValue) Truth() starlark.Bool  { return true }
func (t *taskValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: task") }
func (t *taskValue) AttrNames() []string   { return taskAttrs }

func newTaskValue(in *instance) *taskValue {
	t := &taskValue{in: in}
	t.allowed = starlark.NewBuiltin("allowed", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		c, err := oneInt(b, args, kwargs)
		if err != nil {
			return nil, err
		}
		if in.v == nil {
			return nil, fmt.Errorf("task.allowed: the task is only valid during its call")
		}
		return starlark.Bool(in.v.Allowed(c)), nil
	})
	return t
}

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
		return t.allowed, nil
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

func maskFn(f func(*engine.View, int) (uint64, error)) func(*engine.View, int) (starlark.Value, error) {
	return func(v *engine.View, llc int) (starlark.Value, error) {
		m, err := f(v, llc)
		if err != nil {
			return nil, err
		}
		return starlark.MakeUint64(m), nil
	}
}

func maskArg(name string, x starlark.Value) (uint64, error) {
	i, ok := x.(starlark.Int)
	if !ok {
		return 0, fmt.Errorf("%s: got %s, want int", name, x.Type())
	}
	u, ok := i.Uint64()
	if !ok {
		return 0, fmt.Errorf("%s: %s is not a 64-bit mask", name, i)
	}
	return u, nil
}

// popcount(mask) is the number of set bits of a 64-bit mask.
func popcount(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	u, err := maskArg(b.Name(), x)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt(bits.OnesCount64(u)), nil
}

// nth_bit(mask, j) is the position of the j-th set bit (from 0, lowest
// first) of a 64-bit mask, or -1 (select, PTSELECT in poc-selector).
func nthBit(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var j int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &j); err != nil {
		return nil, err
	}
	u, err := maskArg(b.Name(), x)
	if err != nil {
		return nil, err
	}
	for ; j > 0 && u != 0; j-- {
		u &= u - 1
	}
	if u == 0 || j < 0 {
		return starlark.MakeInt(-1), nil
	}
	return starlark.MakeInt(bits.TrailingZeros64(u)), nil
}
