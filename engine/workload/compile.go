package workload

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"schedplay/engine"
)

// compile is a kernel build, `make -jN` (workloads.md §2.8; the "kernel
// compile" of smt-nice-2004, validation.md V3): one make process keeps j
// jobs in flight, and each job — one object file — is the short chain of
// processes kbuild's if_changed_dep rule runs:
//
//	make ─fork→ sh -c '…'                  (the rule's command line)
//	             ├─fork→ gcc               (the driver)
//	             │        ├─fork→ cc1      (preprocess + compile: the bulk)
//	             │        └─fork→ as       (assemble cc1's output)
//	             └─fork→ fixdep            (rewrite the .d file as .cmd)
//
// Every step is fork (paid by the parent, non-preemptible kernel work),
// exec (paid by the child: execve in the kernel, then the dynamic loader in
// user space), the process's own CPU burst, and exit (teardown, then the
// exit notification wakes the parent blocked in wait4 — a plain wakeup as
// workloads.md §3 specifies). cc1 and as run one after the other, as
// without -pipe; with -pipe they overlap, but as is ~10% of the job and
// waits on cc1's output, so the serial chain is the simpler, close model.
//
// Job sizes are lognormal (heavy-tailed: most kernel .c files compile in
// tens of ms, a few take seconds) drawn from the workload's random stream
// at build time and normalised so the bursts of all jobs add up to exactly
// `work`; the fork/exec/exit costs come on top (≈3% on a P4). The workload
// is finite: make calls Finish when the last job has been reaped, and the
// metric is that completion time.
func init() {
	register(&Kind{
		Name:  "compile",
		WSSKB: 1024,
		forks: func(*Builder) string { return "make forks every job's processes" },
		Doc:   "make -jN kernel build: j jobs in flight, each a sh → gcc → cc1, as; fixdep process chain (fork/exec/exit, parent woken by wait4) with lognormal CPU bursts adding up to work; finite (metric: completion time)",
		Keys: []Key{
			{Name: "j", Type: IntKey, Default: "1", Min: 1, Max: 4096, Doc: "parallel jobs (make -j)"},
			{Name: "work", Type: IntKey, Default: "87", Min: 1, Max: 36000, Doc: "CPU seconds of all the jobs' bursts at full single-thread speed (87: the P4 UP build of smt-nice-2004); fork/exec/exit costs come on top"},
			{Name: "burst_ms", Type: IntKey, Default: "100", Min: 1, Max: 100000, Doc: "mean CPU of one job (one object file), ms; the build has work/burst_ms jobs"},
			{Name: "sigma", Type: IntKey, Default: "100", Min: 0, Max: 300, Doc: "lognormal shape σ of the job sizes ×100 (100: median = mean/1.65, 1 job in 100 above 6× the mean; 0: all equal)"},
			{Name: "io_us", Type: IntKey, Default: "0", Min: 0, Max: 1000000, Doc: "blocking read before each cc1 starts, µs (0: warm page cache, nothing blocks; ~8000 for one disk seek per job on a cold cache)"},
			{Name: "proc_costs", Type: EnumKey, Default: "p4", Values: []string{"p4", "modern"}, Doc: "fork/exec/exit CPU costs: p4 (3 GHz Pentium 4, Linux 2.6, lmbench-era) or modern (~5 GHz x86, Linux 6.x)"},
		},
		build: buildCompile,
	})
}

// Process CPU costs. lmbench's process tests time fork+exit+wait ("fork
// proc"), fork+execve+exit+wait of a small dynamic binary ("exec proc")
// and the same through /bin/sh ("sh proc"). On 2.4–3 GHz Pentium 4s with
// 2.6 kernels they measured roughly 100–180 µs, 450–600 µs and 2–3 ms; a
// current 5 GHz x86 with a 6.x kernel roughly 40–60 µs, 150–250 µs and
// 0.5–0.7 ms (assumed: order-of-magnitude figures recalled from published
// lmbench runs, not measured here). The split below reproduces those sums:
// fork + exit ≈ "fork proc", + exec ≈ "exec proc".
type procCosts struct {
	// fork is do_fork in the parent: copy the task, the VMAs and page
	// tables of a small process (make, sh, gcc have a few MB mapped).
	fork int64
	// execKernel is execve: open and map the binary and ld.so, set up
	// the stack.
	execKernel int64
	// startup is user-space start-up: ld.so relocations for libc (and
	// gcc's libiberty), libc init, the first page faults.
	startup int64
	// exit is do_exit: unmap and free the address space, close files,
	// reparent, notify the parent.
	exit int64
}

var (
	// p4ProcCosts: 80 + 50 = 130 µs ≈ "fork proc"; + 100 + 250 = 480 µs
	// ≈ "exec proc" on a 3.06 GHz P4 with 2.6.4.
	p4ProcCosts = procCosts{fork: 80 * engine.Microsecond, execKernel: 100 * engine.Microsecond,
		startup: 250 * engine.Microsecond, exit: 50 * engine.Microsecond}
	// modernProcCosts: 30 + 20 = 50 µs ≈ "fork proc"; + 50 + 100 = 200
	// µs ≈ "exec proc".
	modernProcCosts = procCosts{fork: 30 * engine.Microsecond, execKernel: 50 * engine.Microsecond,
		startup: 100 * engine.Microsecond, exit: 20 * engine.Microsecond}
)

// How one job's CPU divides among its processes, per mille (assumed, from
// what each process does for a typical 2.6 kernel object):
const (
	// make: check the target's ~300 prerequisites listed in its .cmd
	// file (stat from the dentry cache) and expand the rule.
	makeShare = 10
	// sh: parse the rule's command line; the rest are builtins.
	shShare = 10
	// gcc driver: option and spec processing, building cc1's and as'
	// command lines.
	gccShare = 20
	// as: assembling cc1's output is about a tenth of cc1's time.
	asShare = 90
	// fixdep: reads the .d list (hundreds of headers) and scans every
	// header for CONFIG_ symbols to write the .cmd file.
	fixdepShare = 40
	// cc1 gets the rest (830‰): preprocessing and compiling.
	cc1Share = 1000 - makeShare - shShare - gccShare - asShare - fixdepShare
)

// exitWakeSync is the WF_SYNC hint of the exit notification that wakes a
// parent in wait4. workloads.md §3 specifies a plain wakeup, which is what
// is modelled; note that the kernel's __wake_up_parent actually calls
// __wake_up_sync_key (kernel/exit.c, 2.6 to today), i.e. a sync wakeup
// that lets wake_affine pull the parent to the exiting child's CPU.
const exitWakeSync = false

// procsPerJob is the number of processes one job forks.
const procsPerJob = 5

// compileBuild is the state shared by all processes of one build.
type compileBuild struct {
	j     int
	jobs  []int64 // CPU of each job's bursts, ns; Σ = work
	costs procCosts
	ioNS  int64
	spec  engine.TaskSpec // template for forked processes
	// make's state
	next     int      // next job to start
	done     int      // jobs reaped
	inflight []*cproc // the sh of each running job
	mk       *cproc
	phase    int
}

func buildCompile(b *Builder) error {
	workNS := b.Int("work") * engine.Second
	burstNS := b.Int("burst_ms") * engine.Millisecond
	n := (workNS + burstNS/2) / burstNS
	if n < 1 {
		n = 1
	}
	if free := int64(engine.MaxTasks - b.Sim.NumTasks() - 1); n*procsPerJob > free {
		return fmt.Errorf("work=%d s / burst_ms=%d is %d jobs of %d processes each, more than the %d tasks left (limit %d): raise burst_ms or lower work",
			b.Int("work"), b.Int("burst_ms"), n, procsPerJob, free, engine.MaxTasks)
	}
	cb := &compileBuild{
		j:     int(b.Int("j")),
		jobs:  compileJobSizes(b.Sim.WorkloadRand(b.ID), int(n), workNS, float64(b.Int("sigma"))/100),
		costs: p4ProcCosts,
		ioNS:  b.Int("io_us") * engine.Microsecond,
	}
	if b.Str("proc_costs") == "modern" {
		cb.costs = modernProcCosts
	}
	cb.spec = b.TaskSpec("", nil)
	mk := &cproc{b: cb, name: "make", started: true}
	cb.mk = mk
	id, err := b.Spawn(b.TaskSpec("make", engine.ProgramFunc(cb.makeNext)))
	if err != nil {
		return err
	}
	mk.id = id
	b.Sim.SetFinite(b.ID)
	return nil
}

// makeNext is the make process: start jobs while fewer than j run, else
// wait4 for any child; finish when every job has been reaped.
func (cb *compileBuild) makeNext(ctx *engine.Ctx) engine.Action {
	mk := cb.mk
	for {
		// Reap exited jobs.
		k := 0
		for _, sh := range cb.inflight {
			if sh.exited {
				cb.done++
			} else {
				cb.inflight[k] = sh
				k++
			}
		}
		cb.inflight = cb.inflight[:k]
		if cb.done == len(cb.jobs) {
			ctx.Finish()
			return engine.Exit()
		}
		if len(cb.inflight) >= cb.j || cb.next >= len(cb.jobs) {
			mk.waiting = true // wait4(-1): block until a child exits
			return engine.Block()
		}
		switch cb.phase {
		case 0: // decide the target is out of date
			cb.phase = 1
			if ns := cb.jobs[cb.next] * makeShare / 1000; ns > 0 {
				return engine.Run(ns)
			}
		case 1:
			cb.phase = 2
			return engine.KernelRun(cb.costs.fork)
		case 2:
			cb.phase = 0
			sh := cb.newJob(cb.next)
			cb.next++
			cb.spawn(ctx, sh, mk)
			cb.inflight = append(cb.inflight, sh)
		}
	}
}

// newJob builds the process tree of job i (not yet forked).
func (cb *compileBuild) newJob(i int) *cproc {
	size := cb.jobs[i]
	part := func(share int64) int64 { return size * share / 1000 }
	rest := size - part(makeShare) - part(shShare) - part(gccShare) - part(asShare) - part(fixdepShare)
	name := func(p string) string { return fmt.Sprintf("%s/%d", p, i) }
	cc1 := &cproc{b: cb, name: name("cc1"), script: []cstep{{kind: cRun, ns: rest}}}
	if cb.ioNS > 0 {
		cc1.script = append([]cstep{{kind: cSleep, ns: cb.ioNS}}, cc1.script...)
	}
	as := &cproc{b: cb, name: name("as"), script: []cstep{{kind: cRun, ns: part(asShare)}}}
	gcc := &cproc{b: cb, name: name("gcc"), script: []cstep{
		{kind: cRun, ns: part(gccShare)}, {kind: cFork, child: cc1}, {kind: cFork, child: as}}}
	fixdep := &cproc{b: cb, name: name("fixdep"), script: []cstep{{kind: cRun, ns: part(fixdepShare)}}}
	return &cproc{b: cb, name: name("sh"), script: []cstep{
		{kind: cRun, ns: part(shShare)}, {kind: cFork, child: gcc}, {kind: cFork, child: fixdep}}}
}

// spawn forks p as a child of parent, the calling process (whose fork
// cost is paid).
func (cb *compileBuild) spawn(ctx *engine.Ctx, p, parent *cproc) {
	p.parent = parent
	p.started = true
	ts := cb.spec
	ts.Name = p.name
	ts.Program = p
	id, err := ctx.Spawn(ts)
	if err != nil {
		// buildCompile checked this build's process count against the
		// limit; only several builds together can exhaust it.
		panic(fmt.Sprintf("compile: cannot fork %s: %v", p.name, err))
	}
	p.id = id
}

// cstep is one step of a forked process's script.
type cstep struct {
	kind  int
	ns    int64
	child *cproc
}

const (
	cRun   = iota // burn ns of user CPU
	cSleep        // block ns (I/O)
	cFork         // fork child, then wait4 for it
)

// cproc is one process of the build.
type cproc struct {
	b      *compileBuild
	id     engine.TaskID
	name   string
	parent *cproc
	script []cstep
	pc     int
	phase  int
	// waiting: blocked in wait4 (the exit notification must wake it).
	waiting bool
	// exited: the exit notification has been sent (a zombie for wait4).
	exited   bool
	started  bool // forked
	forkPaid bool // the parent has paid do_fork for the next child
}

// Process life phases.
const (
	cpExec = iota
	cpStartup
	cpScript
	cpExit
	cpNotify
	cpGone
)

// Next implements engine.Program: exec, the script, exit.
func (p *cproc) Next(ctx *engine.Ctx) engine.Action {
	cb := p.b
	for {
		switch p.phase {
		case cpExec:
			p.phase = cpStartup
			return engine.KernelRun(cb.costs.execKernel)
		case cpStartup:
			p.phase = cpScript
			return engine.Run(cb.costs.startup)
		case cpScript:
			if p.pc >= len(p.script) {
				p.phase = cpExit
				continue
			}
			if a, ok := p.step(ctx); ok {
				return a
			}
		case cpExit:
			p.phase = cpNotify
			return engine.KernelRun(cb.costs.exit)
		case cpNotify:
			// exit_notify: become a zombie and wake the parent if it
			// sleeps in wait4.
			p.exited = true
			p.phase = cpGone
			if par := p.parent; par != nil && par.waiting {
				par.waiting = false
				return engine.Wake(par.id, exitWakeSync)
			}
		case cpGone:
			return engine.Exit()
		}
	}
}

// step advances the script; ok is false when it moved on without an
// action.
func (p *cproc) step(ctx *engine.Ctx) (engine.Action, bool) {
	st := &p.script[p.pc]
	switch st.kind {
	case cRun:
		p.pc++
		if st.ns > 0 {
			return engine.Run(st.ns), true
		}
	case cSleep:
		p.pc++
		return engine.Sleep(st.ns), true
	case cFork:
		c := st.child
		switch {
		case !c.started && !p.forkPaid: // do_fork, paid by the parent
			p.forkPaid = true
			return engine.KernelRun(p.b.costs.fork), true
		case !c.started: // wake_up_new_task: the child is runnable
			p.forkPaid = false
			p.b.spawn(ctx, c, p)
		case c.exited: // wait4 reaps the zombie
			p.pc++
		default: // wait4 blocks until the exit notification
			p.waiting = true
			return engine.Block(), true
		}
	}
	return engine.Action{}, false
}

// compileJobSizes draws n lognormal job sizes (median 1, shape sigma) from
// r and scales them so they add up to exactly total ns. Only IEEE basic
// operations are used (no math.Exp/Log, which have assembly versions on
// some platforms), so native and wasm runs draw identical builds.
func compileJobSizes(r *rand.Rand, n int, total int64, sigma float64) []int64 {
	w := make([]uint64, n)
	var sum uint64
	for i := range w {
		x := detExp(float64(sigma * irwinHallNormal(r)))
		w[i] = uint64(x*65536) + 1
		sum += w[i]
	}
	out := make([]int64, n)
	var acc uint64
	prev := int64(0)
	for i := range w {
		acc += w[i]
		hi, lo := bits.Mul64(uint64(total), acc)
		cum, _ := bits.Div64(hi, lo, sum) // total·acc/sum ≤ total
		out[i] = int64(cum) - prev
		prev = int64(cum)
	}
	return out
}

// irwinHallNormal approximates a standard normal draw by the sum of 12
// uniforms minus 6 (mean 0, variance 1, tails cut at ±6σ — for job sizes
// with σ = 1 that is 400× the median, far beyond any real object file).
func irwinHallNormal(r *rand.Rand) float64 {
	s := 0.0
	for range 12 {
		s += r.Float64()
	}
	return s - 6
}

// detExp is e^x from basic IEEE operations: x = k·ln2 + f, e^f by its
// Taylor series (|f| ≤ ln2/2, 13 terms: error below 1e-16), scaled by 2^k.
// Each product is converted explicitly so no platform fuses it into an FMA.
func detExp(x float64) float64 {
	const ln2 = 0.6931471805599453
	k := math.Floor(x/ln2 + 0.5)
	f := x - float64(k*ln2)
	s := 1.0
	for i := 12; i >= 1; i-- {
		s = 1 + float64(f*s)/float64(i)
	}
	return math.Ldexp(s, int(k))
}
