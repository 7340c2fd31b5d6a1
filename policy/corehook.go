package policy

import (
	"fmt"

	"go.starlark.net/starlark"

	"schedplay/engine"
)

// CoreEntryPoint is the function a policy file may define (without
// select_idle_sibling; alone or beside select_idle_cpu) to replace
// select_idle_core (engine.IdleCorePolicy):
//
//	def select_idle_core(p, cpu, idle_cpu):
//	    ...
//	    return cpu_or_minus_1
//	    return cpu_or_minus_1, idle_cpu   # 6.x: also set the loop's idle_cpu
//
// Its shape follows the kernel's in each era. In era 5.2 it is the whole
// search for an idle core of target's LLC: cpu is target, idle_cpu is
// None, and it returns an idle core's CPU or -1 (the kernel's clears
// has_idle_cores when it finds none: set_idle_cores(target, False)). In
// the 6.x eras select_idle_cpu's loop calls it for each core it visits
// while has_idle_core is set: cpu is the loop's CPU, idle_cpu the idle
// thread noted so far (-1: none), and it returns cpu (every thread is
// idle) or -1; a pair sets idle_cpu too, the CPU that select_idle_cpu
// returns if no core turns out idle. idle_cpu may be left out of the
// parameters (select_idle_core(p, cpu)). In a file that defines
// select_idle_sibling, select_idle_core is a plain helper.
const CoreEntryPoint = "select_idle_core"

// findCoreHook notes the file's select_idle_core, if it defines one (a
// file without select_idle_sibling).
func (in *instance) findCoreHook(globals starlark.StringDict) error {
	v, ok := globals[CoreEntryPoint]
	if !ok {
		return nil
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return fmt.Errorf("%s: %s is a %s, not a function", in.prog.file, CoreEntryPoint, v.Type())
	}
	if n := fn.NumParams(); n != 2 && n != 3 {
		return fmt.Errorf("%s: %s: %s takes %d parameters; it must take 2 or 3 (p, cpu[, idle_cpu])", in.prog.file, fn.Position(), CoreEntryPoint, n)
	}
	in.coreFn = fn
	in.coreArgs = make(starlark.Tuple, 3)
	return nil
}

// SelectIdleCore implements engine.IdleCorePolicy (a file that defines
// select_idle_core).
func (in *instance) SelectIdleCore(v *engine.WakeView, cpu int, idleCPU *int) (int, error) {
	if in.initErr != nil {
		return -1, in.initErr
	}
	if in.ncpu == 0 {
		in.ncpu = v.NCPU()
	}
	args := in.coreArgs[:in.coreFn.NumParams()]
	args[0], args[1] = in.task, starlark.MakeInt(cpu)
	if len(args) == 3 {
		args[2] = starlark.None
		if idleCPU != nil {
			args[2] = starlark.MakeInt(*idleCPU)
		}
	}
	res, err := in.callFn(v, in.coreFn, args)
	if err != nil {
		return -1, runError(in.prog.file, err, in.prog.maxSteps)
	}
	return in.coreResult(v, res, idleCPU)
}

// coreResult checks select_idle_core's result: cpu or -1, or (cpu or -1,
// idle_cpu) in 6.x, where idle_cpu then goes to *idleCPU.
func (in *instance) coreResult(v *engine.WakeView, res starlark.Value, idleCPU *int) (int, error) {
	if i, ok := res.(starlark.Int); ok { // the fast path
		if c, ok := i.Int64(); ok && (c == -1 || (c >= 0 && c < int64(v.NCPU()) && v.Allowed(int(c)))) {
			return int(c), nil
		}
	}
	where := fmt.Sprintf("%s: %s", in.coreFn.Position(), CoreEntryPoint)
	cv := res
	if t, ok := res.(starlark.Tuple); ok {
		if len(t) != 2 {
			return -1, fmt.Errorf("%s returned a tuple of %d; want cpu or (cpu, idle_cpu)", where, len(t))
		}
		if idleCPU == nil {
			return -1, fmt.Errorf("%s returned (cpu, idle_cpu): era 5.2's select_idle_core has no idle_cpu (return a CPU or -1)", where)
		}
		ic, err := in.coreCPU(v, t[1], where, "idle_cpu")
		if err != nil {
			return -1, err
		}
		*idleCPU = ic
		cv = t[0]
	}
	return in.coreCPU(v, cv, where, "CPU")
}

// coreCPU checks one CPU of select_idle_core's result: -1, or a CPU of
// the machine that the task may run on.
func (in *instance) coreCPU(v *engine.WakeView, x starlark.Value, where, what string) (int, error) {
	c, err := starlark.AsInt32(x)
	switch {
	case err != nil:
		return -1, fmt.Errorf("%s returned %s %s, not a CPU", where, what, x)
	case c == -1:
		return -1, nil
	case c < 0 || c >= v.NCPU():
		return -1, fmt.Errorf("%s returned %s %d: the machine has CPUs 0..%d (or -1: none)", where, what, c, v.NCPU()-1)
	case !v.Allowed(c):
		return -1, fmt.Errorf("%s returned %s %d, outside the task's allowed CPUs", where, what, c)
	}
	return c, nil
}
