// Package policy runs a wakeup policy written in Starlark (go.starlark.net)
// in place of the fair classes' select_idle_sibling (engine.WakePolicy).
//
// A policy file defines
//
//	def select_idle_sibling(p, prev, target):
//	    ...
//	    return cpu            # reported as stage "policy"
//	    return cpu, "select_idle_cpu"   # or one of the kernel's stage names
//
// or, to replace the LLC scan alone and keep the era's own
// select_idle_sibling (run in Go, so cheaper), select_idle_cpu(p,
// target[, has_idle_core]) returning the CPU found or -1 (CPUEntryPoint),
// or select_idle_core(p, cpu[, idle_cpu]) to replace the search for an
// idle core (CoreEntryPoint: v5.2's whole search, or 6.x's look at one
// core), or both of these; and reads the machine through the
// predeclared built-ins (Builtins lists them): probe(cpu) is the only way
// to learn a CPU's runtime state in a call, and costs the waker what the
// kernel's own probes cost; the kernel's stages are
// kernel.select_idle_core(target), ...
//
// A file may also define newidle_balance(cpu) (NewidleEntryPoint), alone
// or beside either, to replace the newly idle pull (newidle.go).
//
// Starlark's own run time is not simulated time: only the probes and the
// kernel stages a policy calls cost the waker anything. The interpreter
// is deterministic (no clock, no randomness, insertion-ordered dicts), so
// a policy run reproduces like any other run.
package policy

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"schedplay/engine"
)

// Limits.
const (
	// MaxSourceBytes bounds a policy file.
	MaxSourceBytes = 64 << 10
	// DefaultMaxSteps is the Starlark step limit of one call.
	DefaultMaxSteps = 1_000_000
)

// EntryPoint is the function a policy file must define.
const EntryPoint = "select_idle_sibling"

// CPUEntryPoint is the function a policy file may define instead, to
// replace select_idle_cpu alone (engine.IdleCPUPolicy): the era's own
// select_idle_sibling runs and calls it where it calls select_idle_cpu,
// as select_idle_cpu(p, target) or select_idle_cpu(p, target,
// has_idle_core); it returns the CPU found or -1 (or (cpu, stage)).
const CPUEntryPoint = "select_idle_cpu"

// Program is a compiled policy file: compile once, then New gives each
// simulation its own instance. A Program is safe for concurrent use.
type Program struct {
	file     string
	prog     *starlark.Program
	maxSteps uint64
	hooks    engine.Hook // the steps the file replaces
}

// Hooks are the steps the file replaces (its entry points).
func (p *Program) Hooks() engine.Hook { return p.hooks }

// Name is the file name the program was compiled from.
func (p *Program) Name() string { return p.file }

// SetMaxSteps sets the step limit per call (0: DefaultMaxSteps).
func (p *Program) SetMaxSteps(n uint64) {
	if n == 0 {
		n = DefaultMaxSteps
	}
	p.maxSteps = n
}

var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Compile parses, resolves and initialises the policy source src (named
// filename in errors, which are "file:line:col: message").
func Compile(filename string, src []byte) (*Program, error) {
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("%s: %d bytes, above the %d-byte limit of a policy", filename, len(src), MaxSourceBytes)
	}
	f, err := fileOptions.Parse(filename, src, 0)
	if err != nil {
		return nil, compileError(err)
	}
	bindGlobals(f)
	prog, err := starlark.FileProgram(f, isHidden)
	if err != nil {
		return nil, compileError(err)
	}
	p := &Program{file: filename, prog: prog, maxSteps: DefaultMaxSteps}
	in := &instance{prog: p}
	fn, err := p.init(in)
	if err != nil {
		return nil, err
	}
	in.fn = fn
	p.hooks = in.Hooks()
	return p, nil
}

// stepLimit is a thread's OnMaxSteps. The interpreter notes an
// instruction's pc only once it starts it, so at the limit the innermost
// frame's position is that of the instruction before, which for a loop's
// jump back is the function's def line: the limit is stretched a step at
// a time (at most 64) until the frame is at a line of its body, and the
// error names the loop's line.
type stepLimit struct{ extra int }

func (l *stepLimit) onMaxSteps(th *starlark.Thread) {
	if th.CallStackDepth() > 0 && l.extra < 64 {
		fr := th.DebugFrame(0)
		if fn, ok := fr.Callable().(*starlark.Function); ok && fr.Position() == fn.Position() {
			l.extra++
			th.SetMaxExecutionSteps(th.ExecutionSteps() + 1)
			return
		}
	}
	th.Cancel("too many steps")
}

// init runs the file's top level with in's built-ins and returns its
// entry point, bound to them.
func (p *Program) init(in *instance) (*starlark.Function, error) {
	th := &starlark.Thread{Name: p.file, Print: func(*starlark.Thread, string) {}}
	th.OnMaxSteps = (&stepLimit{}).onMaxSteps
	th.SetMaxExecutionSteps(DefaultMaxSteps)
	globals, err := p.prog.Init(th, hiddenPredeclared(in.predeclared()))
	if err != nil {
		return nil, runError(p.file, err, DefaultMaxSteps)
	}
	globals.Freeze()
	if err := in.initNewidle(globals); err != nil {
		return nil, err
	}
	name, want := EntryPoint, "3 (p, prev, target)"
	v, ok := globals[EntryPoint]
	if !ok {
		if err := in.findCoreHook(globals); err != nil {
			return nil, err
		}
		if v, ok = globals[CPUEntryPoint]; ok {
			name, want = CPUEntryPoint, "2 or 3 (p, target[, has_idle_core])"
			in.cpuHook = true
		} else if in.coreFn != nil {
			return nil, nil // select_idle_core alone
		}
	}
	if !ok && in.nfn != nil {
		return nil, nil // newidle_balance alone
	}
	if !ok {
		return nil, fmt.Errorf("%s: defines no %s(p, prev, target) (nor %s(p, target), %s(p, cpu) or %s(cpu))", p.file, EntryPoint, CPUEntryPoint, CoreEntryPoint, NewidleEntryPoint)
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return nil, fmt.Errorf("%s: %s is a %s, not a function", p.file, name, v.Type())
	}
	if n := fn.NumParams(); (!in.cpuHook && n != 3) || (in.cpuHook && n != 2 && n != 3) {
		return nil, fmt.Errorf("%s: %s: %s takes %d parameters; it must take %s", p.file, fn.Position(), name, fn.NumParams(), want)
	}
	return fn, nil
}

func compileError(err error) error {
	var se syntax.Error
	if errors.As(err, &se) {
		return fmt.Errorf("%s: %s", se.Pos, se.Msg)
	}
	var el resolve.ErrorList
	if errors.As(err, &el) {
		var b strings.Builder
		for i, e := range el {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s: %s", e.Pos, e.Msg)
		}
		return errors.New(b.String())
	}
	return err
}

// runError names the line of the policy a Starlark runtime error came
// from: the innermost frame in the file (a built-in's name is added).
func runError(file string, err error, steps uint64) error {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: %v", file, err)
	}
	msg := ee.Msg
	if strings.HasSuffix(msg, "too many steps") {
		msg = fmt.Sprintf("more than %d Starlark steps in one call (the policy's step limit)", steps)
	}
	stack := ee.CallStack
	in := ""
	if n := len(stack); n > 0 && stack[n-1].Pos.Filename() == "<builtin>" {
		in = stack[n-1].Name + ": "
		stack = stack[:n-1]
	}
	if n := len(stack); n > 0 {
		return fmt.Errorf("%s: %s%s", stack[n-1].Pos, in, msg)
	}
	return fmt.Errorf("%s: %s%s", file, in, msg)
}

// New is an instance of the program for one simulation: the file's top
// level run again with built-ins bound to this instance (deterministic:
// Compile ran it once already).
func (p *Program) New() engine.WakePolicy {
	in := &instance{prog: p}
	in.th = &starlark.Thread{Name: p.file, Print: func(*starlark.Thread, string) {}}
	in.th.OnMaxSteps = in.limit.onMaxSteps
	in.task = newTaskValue(in)
	in.args = make(starlark.Tuple, 3)
	in.tuples = make([][]starlark.Tuple, len(stageNames))
	in.fn, in.initErr = p.init(in)
	return in
}

// Hooks implements engine.Hooked: the steps the file's entry points
// replace.
func (in *instance) Hooks() engine.Hook {
	h := in.newidleHook()
	if in.cpuHook {
		h |= engine.HookSelectIdleCPU
	}
	if in.coreFn != nil {
		h |= engine.HookSelectIdleCore
	}
	if !in.cpuHook && (in.fn != nil || in.initErr != nil) {
		h |= engine.HookSelectIdleSibling
	}
	return h
}

// SelectIdleCPU implements engine.IdleCPUPolicy (a file that defines
// select_idle_cpu).
func (in *instance) SelectIdleCPU(v *engine.WakeView, target int, hasIdleCore bool) (int, engine.Stage, error) {
	if in.initErr != nil {
		return 0, 0, in.initErr
	}
	if in.ncpu == 0 {
		in.ncpu = v.NCPU()
	}
	args := in.args[:2]
	in.args[0], in.args[1] = in.task, starlark.MakeInt(target)
	if in.fn.NumParams() == 3 {
		args = in.args[:3]
		in.args[2] = starlark.Bool(hasIdleCore)
	}
	res, err := in.callFn(v, in.fn, args)
	if err != nil {
		return 0, 0, runError(in.prog.file, err, in.prog.maxSteps)
	}
	return in.result(v, res, CPUEntryPoint, true)
}

type instance struct {
	prog     *Program
	fn       *starlark.Function
	cpuHook  bool               // fn is select_idle_cpu
	coreFn   *starlark.Function // select_idle_core, when it is a hook (corehook.go)
	coreArgs starlark.Tuple
	limit    stepLimit
	initErr  error
	th       *starlark.Thread
	v        *engine.WakeView // the wakeup's view during a wakeup call
	mv       *engine.View     // the call's view, whichever the call
	nfn      *starlark.Function
	bv       *engine.BalanceView // newidle_balance's view during its call
	task     *taskValue
	args     starlark.Tuple

	ncpu   int
	tuples [][]starlark.Tuple                  // per stage, per CPU: (cpu, stage)
	wraps  map[*starlark.List][]*starlark.List // topology list -> wrap(l, l[i]) by i
	knobs  map[string]knobRef
}

// policyStages are the stage names a policy may report.
var policyStages = map[string]engine.Stage{}

func init() {
	for _, st := range []engine.Stage{engine.StageTarget, engine.StagePrev, engine.StageRecent, engine.StageIdleCore,
		engine.StageIdleCPU, engine.StageIdleSMT, engine.StageBusyTarget, engine.StageNoLLC, engine.StagePolicy} {
		policyStages[st.String()] = st
	}
}

// SelectIdleSibling implements engine.WakePolicy.
func (in *instance) SelectIdleSibling(v *engine.WakeView) (int, engine.Stage, error) {
	if in.initErr != nil {
		return 0, 0, in.initErr
	}
	if in.ncpu == 0 {
		in.ncpu = v.NCPU()
	}
	res, err := in.call(v)
	if err != nil {
		return 0, 0, runError(in.prog.file, err, in.prog.maxSteps)
	}
	return in.result(v, res, EntryPoint, false)
}

// result checks a call's result: cpu or (cpu, stage); -1 (none) when
// orNone.
func (in *instance) result(v *engine.WakeView, res starlark.Value, name string, orNone bool) (int, engine.Stage, error) {
	// A bare CPU is the policy's own pick (stage policy); from a
	// select_idle_cpu hook (orNone) it is what select_idle_cpu found, as
	// the kernel's is reported.
	stage := engine.StagePolicy
	if orNone {
		stage = engine.StageIdleCPU
	}
	cv := res
	if t, ok := res.(starlark.Tuple); ok && len(t) == 2 {
		// the fast path: (cpu, one of the stage names)
		if s, ok := t[1].(starlark.String); ok {
			if st, ok := policyStages[string(s)]; ok {
				if i, ok := t[0].(starlark.Int); ok {
					if c, ok := i.Int64(); ok && c >= 0 && c < int64(v.NCPU()) && ((!orNone && int(c) == v.Target()) || v.Allowed(int(c))) {
						return int(c), st, nil
					}
					if c, ok := i.Int64(); ok && c == -1 && orNone {
						return -1, st, nil
					}
				}
			}
		}
	}
	where := func() string { return fmt.Sprintf("%s: %s", in.fn.Position(), name) }
	if t, ok := res.(starlark.Tuple); ok {
		if len(t) != 2 {
			return 0, 0, fmt.Errorf("%s returned a tuple of %d; want cpu or (cpu, stage)", where(), len(t))
		}
		name, ok := starlark.AsString(t[1])
		if !ok {
			return 0, 0, fmt.Errorf("%s returned stage %s, not a string", where(), t[1])
		}
		if stage, ok = policyStages[name]; !ok {
			return 0, 0, fmt.Errorf("%s returned stage %q; want one of %s", where(), name, strings.Join(stageList(), ", "))
		}
		cv = t[0]
	}
	c, err := starlark.AsInt32(cv)
	if err == nil && c == -1 && orNone {
		return -1, stage, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s returned %s, not a CPU", where(), cv)
	}
	if c < 0 || c >= v.NCPU() {
		return 0, 0, fmt.Errorf("%s returned CPU %d: the machine has CPUs 0..%d", where(), c, v.NCPU()-1)
	}
	if (orNone || c != v.Target()) && !v.Allowed(c) {
		return 0, 0, fmt.Errorf("%s returned CPU %d, outside the task's allowed CPUs", where(), c)
	}
	return c, stage, nil
}

// call runs the entry point.
func (in *instance) call(v *engine.WakeView) (starlark.Value, error) {
	in.args[0], in.args[1], in.args[2] = in.task, starlark.MakeInt(v.Prev()), starlark.MakeInt(v.Target())
	return in.callFn(v, in.fn, in.args)
}

// callFn runs fn with the built-ins bound to v. A call made during
// another (a hook that a kernel stage the policy called reaches: the
// engine nests the view) shares the outer call's step limit and gives
// the outer call its view back, even if the policy panics through the
// interpreter.
func (in *instance) callFn(v *engine.WakeView, fn *starlark.Function, args starlark.Tuple) (starlark.Value, error) {
	outer, outerMV := in.v, in.mv
	in.v, in.mv = v, &v.View
	defer func() { in.v, in.mv = outer, outerMV }()
	if outer == nil {
		in.limit.extra = 0
		in.th.SetMaxExecutionSteps(in.th.ExecutionSteps() + in.prog.maxSteps)
	}
	return starlark.Call(in.th, fn, args, nil)
}

func stageList() []string {
	var out []string
	for _, n := range engine.StageNames() {
		if _, ok := policyStages[n]; ok {
			out = append(out, n)
		}
	}
	return out
}
