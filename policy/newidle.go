package policy

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"schedplay/engine"
)

// NewidleEntryPoint is the function a policy file may define to replace
// the era's newly idle balance (engine.NewidlePolicy), alone or beside
// select_idle_sibling or select_idle_cpu:
//
//	def newidle_balance(cpu):
//	    ...
//	    return src          # pull one fair task from CPU src
//	    return src, n       # pull up to n
//	    return -1           # (or None) pull nothing: stay idle
//
// cpu is the CPU going idle. The built-ins read the machine as in a
// wakeup's call, except that a probe costs the CPU what load_balance pays
// to read a runqueue (lb_cpu_ns), and the wakee's and the scan's
// built-ins are refused; overloaded() is the root domain's overload flag,
// h_nr_running, nr_queued and cpu_load read a probed CPU's fair tasks and
// load. kernel.newidle_balance() runs the era's own balance (its pulls
// and cost) and returns the number of tasks it pulled. The engine pulls
// what the policy names as a newly idle load_balance pass would
// (can_migrate_task's rules), charging lb_base_ns for the pass.
const NewidleEntryPoint = "newidle_balance"

var errWakeOnly = fmt.Errorf("only in a wakeup's call (%s, %s), not in %s", EntryPoint, CPUEntryPoint, NewidleEntryPoint)

var errBalanceOnly = fmt.Errorf("only inside %s", NewidleEntryPoint)

// initNewidle finds newidle_balance among the file's globals.
func (in *instance) initNewidle(globals starlark.StringDict) error {
	v, ok := globals[NewidleEntryPoint]
	if !ok {
		return nil
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return fmt.Errorf("%s: %s is a %s, not a function", in.prog.file, NewidleEntryPoint, v.Type())
	}
	if fn.NumParams() != 1 {
		return fmt.Errorf("%s: %s: %s takes %d parameters; it must take 1 (cpu)", in.prog.file, fn.Position(), NewidleEntryPoint, fn.NumParams())
	}
	in.nfn = fn
	return nil
}

func (in *instance) newidleHook() engine.Hook {
	if in.nfn != nil {
		return engine.HookNewidleBalance
	}
	return 0
}

// NewidleBalance implements engine.NewidlePolicy (a file that defines
// newidle_balance).
func (in *instance) NewidleBalance(v *engine.BalanceView) (int, int, error) {
	if in.initErr != nil {
		return -1, 0, in.initErr
	}
	if in.mv != nil {
		return -1, 0, fmt.Errorf("%s: %s called inside another call of the policy", in.prog.file, NewidleEntryPoint)
	}
	if in.ncpu == 0 {
		in.ncpu = v.NCPU()
	}
	in.bv, in.mv = v, &v.View
	in.limit.extra = 0
	in.th.SetMaxExecutionSteps(in.th.ExecutionSteps() + in.prog.maxSteps)
	res, err := starlark.Call(in.th, in.nfn, starlark.Tuple{starlark.MakeInt(v.CPU())}, nil)
	in.bv, in.mv = nil, nil
	if err != nil {
		return -1, 0, runError(in.prog.file, err, in.prog.maxSteps)
	}
	return in.newidleResult(res, v.CPU())
}

// newidleResult reads src, (src, n), -1 or None.
func (in *instance) newidleResult(res starlark.Value, cpu int) (int, int, error) {
	where := func() string { return fmt.Sprintf("%s: %s", in.nfn.Position(), NewidleEntryPoint) }
	if res == starlark.None {
		return -1, 0, nil
	}
	n := 1
	cv := res
	if t, ok := res.(starlark.Tuple); ok {
		if len(t) != 2 {
			return -1, 0, fmt.Errorf("%s returned a tuple of %d; want cpu, (cpu, n), -1 or None", where(), len(t))
		}
		x, err := starlark.AsInt32(t[1])
		if err != nil {
			return -1, 0, fmt.Errorf("%s returned n = %s, not an int", where(), t[1])
		}
		if x < 1 {
			return -1, 0, fmt.Errorf("%s returned n = %d; want at least 1", where(), x)
		}
		cv, n = t[0], x
	}
	c, err := starlark.AsInt32(cv)
	if err != nil {
		return -1, 0, fmt.Errorf("%s returned %s, not a CPU", where(), cv)
	}
	if c == -1 {
		return -1, 0, nil
	}
	if c < 0 || c >= in.ncpu {
		return -1, 0, fmt.Errorf("%s returned CPU %d: the machine has CPUs 0..%d (or -1: no pull)", where(), c, in.ncpu-1)
	}
	if c == cpu {
		return -1, 0, fmt.Errorf("%s returned CPU %d, the CPU going idle itself (-1: no pull)", where(), c)
	}
	return c, n, nil
}

// bbound is bound for a built-in of newidle_balance only.
func (in *instance) bbound(name string, f func(v *engine.BalanceView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if in.bv == nil {
			if _, err := f(nil, b, args, kwargs); err != nil && !errors.Is(err, errOutside) {
				return nil, err
			}
			if in.mv != nil {
				return nil, errBalanceOnly
			}
			return nil, errOutside
		}
		return f(in.bv, b, args, kwargs)
	})
}

// kernelNewidle is kernel.newidle_balance(): the era's own balance, the
// number of tasks it pulled.
func kernelNewidle(v *engine.BalanceView, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 0 || len(kwargs) != 0 {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
	}
	if v == nil {
		return nil, nil
	}
	return starlark.MakeInt(v.KernelNewidleBalance()), nil
}

// newidleBuiltins adds the built-ins a pull policy wants: the runqueue
// reads (of a probed CPU, in any call) and the root domain's overload
// flag.
func (in *instance) newidleBuiltins(d starlark.StringDict) {
	d["h_nr_running"] = in.fn1cpuInt("h_nr_running", (*engine.View).HNrRunning)
	d["nr_queued"] = in.fn1cpuInt("nr_queued", (*engine.View).NrQueued)
	d["cpu_load"] = in.fn1cpuInt64("cpu_load", (*engine.View).Load)
	d["overloaded"] = in.fn0("overloaded", func(v *engine.View) starlark.Value { return starlark.Bool(v.Overloaded()) })
}
