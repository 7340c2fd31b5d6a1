package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"schedplay/engine/knob"
	"schedplay/engine/machine"
	"schedplay/oracle"
	"schedplay/presets"
)

type kernelFlags struct {
	kernel, preset, machineFile, smp string
	maxCPUs                          int
	workloads, features              multiFlag
	duration                         time.Duration
	durFlag                          durationFlag
	seed                             uint64
	timeMode, format, out, keep      string
	era, tableCases                  string
	force, fetchOnly, table          bool
}

func kernelFlagSet(f *kernelFlags) *flag.FlagSet {
	fs := newFlagSet("kernel")
	var names []string
	for _, k := range oracle.Kernels {
		names = append(names, k.Name)
	}
	fs.StringVar(&f.kernel, "kernel", "", "the Debian `KERNEL` to boot: "+strings.Join(names, " or "))
	fs.StringVar(&f.preset, "preset", "", "machine preset `NAME` whose shape the guest gets (scaled down to --max-cpus, LLC shape kept)")
	fs.StringVar(&f.machineFile, "machine-file", "", "a machine JSON `FILE` instead of --preset")
	fs.StringVar(&f.smp, "smp", "", "the guest's `SHAPE` instead of a preset's: sockets=S,cores=C,threads=T[,llcs=L] (C cores per socket in L LLCs)")
	fs.IntVar(&f.maxCPUs, "max-cpus", 16, "scale a preset down to at most `N` vCPUs (TCG runs them all on one host thread)")
	fs.Var(&f.workloads, "workload", "workload `SPEC` as run takes it (repeatable; the guest runs schbench, hackbench, pipe, hog and cyclictest; policy=fifo|rr,rtprio=N as sched_setscheduler)")
	fs.Var(&f.features, "feature", "set a sched_feat on both sides, `NAME=0|1` (repeatable): the guest writes NAME or NO_NAME into /sys/kernel/debug/sched/features before the load, the simulation gets the knob; only the kernel's own sched_feats its era has as knobs (e.g. DELAY_DEQUEUE, RUN_TO_PARITY, PLACE_LAG, WA_IDLE for 6.12)")
	f.duration = time.Second
	f.durFlag = durationFlag{d: &f.duration}
	fs.Var(&f.durFlag, "duration", "how long the workloads run, in the guest and in the simulation (`TIME`)")
	fs.Uint64Var(&f.seed, "seed", 1, "the simulation's `SEED`")
	fs.StringVar(&f.era, "era", "", "simulate `ERA` instead of the kernel's own era (an A/B of two eras against one guest run: the icount guest repeats; the output names the override)")
	fs.StringVar(&f.timeMode, "time", "", "the guest's clock, `MODE`: icount (one host thread, 1 ns per instruction: deterministic) or host (one thread per vCPU, the host's clock); default: icount, host for 6.1 (which does not boot under icount)")
	fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text or json")
	fs.StringVar(&f.out, "out", "", "write the output to `FILE` (whole or not at all)")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fs.StringVar(&f.keep, "keep", "", "keep the guest's initramfs, console, report and both traces in `DIR`")
	fs.BoolVar(&f.table, "table", false, "run the README's table (both kernels, or --kernel's, × 4 shapes × schbench, hackbench, pipe, and the RT cases on the first shape) and print it in Markdown (make kernel-table; over an hour here)")
	fs.StringVar(&f.tableCases, "table-cases", "all", "with --table, which rows: all, fair (the shapes × schbench, hackbench, pipe), rt (the RT cases: FIFO hogs beside schbench, a FIFO pipe, cyclictest, on the first shape) or dl (the deadline cases: deadline hogs beside schbench, a deadline pipe, on the first shape)")
	fs.BoolVar(&f.fetchOnly, "fetch-only", false, "only download the kernel (every kernel without --kernel) into the cache, and exit (make kernel-deps)")
	return fs
}

// cmdKernel boots a real kernel on the machine's shape, runs the
// workloads there and in the simulation, and prints both.
func cmdKernel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f kernelFlags
	if err := parseFlags(kernelFlagSet(&f), args, stdout, false); err != nil {
		return err
	}
	if f.fetchOnly {
		return fetchKernels(f.kernel, stdout)
	}
	if f.table {
		ks := oracle.Kernels
		if f.kernel != "" {
			k, err := oracle.KernelByName(f.kernel)
			if err != nil {
				return usagef("%v", err)
			}
			ks = []oracle.Kernel{*k}
		} else {
			ks = append([]oracle.Kernel(nil), ks...)
		}
		feats := map[string][]oracle.Feature{}
		for i := range ks {
			if err := withEra(&ks[i], f.era); err != nil {
				return err
			}
			fs, err := ks[i].ParseFeatures(f.features)
			if err != nil {
				return usagef("%v", err)
			}
			feats[ks[i].Name] = fs
		}
		if f.tableCases != "all" && f.tableCases != "fair" && f.tableCases != "rt" && f.tableCases != "dl" {
			return usagef("--table-cases %q not allowed (allowed: all, fair, rt, dl)", f.tableCases)
		}
		return kernelTable(ctx, ks, feats, f.tableCases, stdout, stderr)
	}
	if f.kernel == "" {
		return usagef("kernel: --kernel is required (%s)", kernelNames())
	}
	kp, err := oracle.KernelByName(f.kernel)
	if err != nil {
		return usagef("%v", err)
	}
	kc := *kp
	k := &kc
	if err := withEra(k, f.era); err != nil {
		return err
	}
	features, err := k.ParseFeatures(f.features)
	if err != nil {
		return usagef("%v", err)
	}
	if f.format != "text" && f.format != "json" {
		return usagef("--format %q not allowed (allowed: text, json)", f.format)
	}
	tm := oracle.TimeMode(f.timeMode)
	if tm == "" {
		tm = k.Time
	}
	if tm != oracle.Icount && tm != oracle.HostClock {
		return usagef("--time %q not allowed (allowed: icount, host)", f.timeMode)
	}
	if len(f.workloads) == 0 {
		return usagef("kernel: no --workload given (e.g. --workload schbench:m=2,t=4)")
	}
	if f.duration <= 0 || f.duration > time.Minute {
		return usagef("--duration %v out of range (allowed: 1ns..1m: the guest is emulated)", f.duration)
	}
	if f.maxCPUs < 1 || f.maxCPUs > oracle.MaxGuestCPUs {
		return usagef("--max-cpus %d out of range (allowed: 1..%d)", f.maxCPUs, oracle.MaxGuestCPUs)
	}
	base, shape, notes, err := f.machine()
	if err != nil {
		return err
	}
	if missing := oracle.Requirements(); len(missing) > 0 {
		return usagef("kernel: this machine lacks %s: apt-get install qemu-system-x86 busybox-static cpio (see README, \"The real kernel\")", strings.Join(missing, ", "))
	}
	cache, err := oracle.CacheDir()
	if err != nil {
		return err
	}
	out := &output{flag: "--out", path: f.out}
	if err := openOutputs(f.force, nil, out); err != nil {
		return err
	}
	defer out.abort()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "kernel: "+format+"\n", a...) }
	c, err := oracle.Run(ctx, oracle.Options{Kernel: k, Base: base, Shape: shape, Notes: notes, Workloads: f.workloads,
		Duration: f.duration, Seed: f.seed, Time: tm, Features: features, Cache: cache, Keep: f.keep, Logf: logf})
	var te *oracle.TopologyError
	if errors.As(err, &te) {
		return usagef("kernel: %v", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return &interruptedError{"interrupted; nothing compared"}
		}
		return fmt.Errorf("kernel: %v", err)
	}
	dst := newSink(stdout, out)
	if f.format == "json" {
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		dst.Write(append(b, '\n'))
	} else {
		c.WriteText(dst)
	}
	return dst.finish(f.force)
}

func kernelNames() string {
	var names []string
	for _, k := range oracle.Kernels {
		names = append(names, k.Name)
	}
	return "allowed: " + strings.Join(names, ", ")
}

// machine is the shape the guest gets and the spec its costs come from.
func (f *kernelFlags) machine() (*machine.Spec, oracle.Shape, []string, error) {
	given := 0
	for _, s := range []string{f.preset, f.machineFile, f.smp} {
		if s != "" {
			given++
		}
	}
	if given > 1 {
		return nil, oracle.Shape{}, nil, usagef("kernel: give one of --preset, --machine-file and --smp")
	}
	if f.smp != "" {
		sh, err := oracle.ParseSMP(f.smp)
		if err != nil {
			return nil, sh, nil, usagef("%v", err)
		}
		// The costs and idle states of a generic x86 server.
		base, _ := presets.Machine("intel-2s-44c-88t")
		return base, sh, []string{"shape from --smp; costs and idle states of intel-2s-44c-88t"}, nil
	}
	var spec *machine.Spec
	var err error
	switch {
	case f.machineFile != "":
		data, rerr := readLimited(f.machineFile, presets.MaxInputBytes)
		if rerr != nil {
			return nil, oracle.Shape{}, nil, usagef("--machine-file %s: %v", f.machineFile, cause(rerr))
		}
		spec, err = presets.ParseMachine(data, f.machineFile)
	case f.preset != "":
		spec, err = presets.Machine(f.preset)
	default:
		return nil, oracle.Shape{}, nil, usagef("kernel: give --preset NAME, --machine-file FILE or --smp sockets=S,cores=C,threads=T")
	}
	if err != nil {
		return nil, oracle.Shape{}, nil, usagef("kernel: %v", err)
	}
	sh, notes := oracle.ShapeOf(spec).Scale(f.maxCPUs)
	return spec, sh, notes, nil
}

// fetchKernels downloads the named kernel, or all of them, into the cache.
func fetchKernels(name string, stdout io.Writer) error {
	cache, err := oracle.CacheDir()
	if err != nil {
		return err
	}
	ks := oracle.Kernels
	if name != "" {
		k, err := oracle.KernelByName(name)
		if err != nil {
			return usagef("%v", err)
		}
		ks = []oracle.Kernel{*k}
	}
	for i := range ks {
		f, err := oracle.Fetch(&ks[i], cache, func(format string, a ...any) { fmt.Fprintf(stdout, "kernel: "+format+"\n", a...) })
		if err != nil {
			return fmt.Errorf("kernel %s: %v", ks[i].Name, err)
		}
		fmt.Fprintf(stdout, "kernel %s: %s %s: %s\n", ks[i].Name, f.Package, f.Version, f.Image)
	}
	return nil
}

// The README's table: the shapes (a preset scaled to a vCPU budget) and
// the workloads every kernel runs.
var tableShapes = []struct {
	preset string
	max    int
	what   string
}{
	{"intel-2s-44c-88t", 16, "2-socket SMT2"},
	{"power9-2s-44c-176t", 16, "2-socket SMT4"},
	{"amd-zen4-2s-256c-512t", 32, "2-socket, 2 CCX per socket"},
	{"amd-7950x-16c-32t", 32, "1 socket, 2 CCX"},
}

var tableWorkloads = []string{"schbench:m=2,t=4", "hackbench:g=2,f=4,l=200", "pipe:l=20000"}

// The RT cases (issue 28): FIFO hogs beside schbench, a FIFO ping-pong,
// cyclictest's periodic FIFO threads alone and preempting lower-priority
// FIFO hogs (where they land, and whether the preempted hogs are pushed
// away); " + " joins the workloads of one case. They run on the first shape only (a few minutes each under TCG).
// Era 6.12 runs them with its fair server and without RT throttling.
var tableRTWorkloads = []string{"hog:n=4,policy=fifo,rtprio=50 + schbench:m=2,t=4", "pipe:l=20000,policy=fifo,rtprio=50", "cyclictest:t=4,p=80",
	"hog:n=12,policy=fifo,rtprio=40 + cyclictest:t=8,p=80"}

// The deadline cases (issue 28): SCHED_DEADLINE hogs held to 30% each
// beside schbench (where they land, their pushes and pulls, what the fair
// tasks keep), and a deadline pipe whose two processes wake each other
// (select_task_rq_dl and find_later_rq at every wakeup). The trace shows
// a deadline task at prio -1, so the RT measures cover them.
var tableDLWorkloads = []string{"hog:n=4,policy=deadline,dl_runtime_us=30000,dl_period_us=100000 + schbench:m=2,t=4",
	"pipe:l=20000,policy=deadline,dl_runtime_us=900,dl_period_us=1000"}

// withEra makes k's simulation run era (--era) instead of the kernel's
// own; "" keeps it. The kernel's knobs belong to its own era and go.
func withEra(k *oracle.Kernel, era string) error {
	if era == "" {
		return nil
	}
	e, err := knob.ParseEra(era)
	if err != nil {
		return usagef("--era: %v", err)
	}
	if e.String() != k.Era {
		k.Note = fmt.Sprintf("--era %s: the simulation runs era %s instead of kernel %s's own era %s", e, e, k.Name, k.Era)
		k.Era, k.Knobs = e.String(), nil
	}
	return nil
}

// kernelTable runs each of ks on every shape and workload for 1 s and
// prints one Markdown row each: the judged measures within tolerance and
// the ones beyond it, real → sim. feats are each kernel's --feature
// settings, named in its rows.
func kernelTable(ctx context.Context, ks []oracle.Kernel, feats map[string][]oracle.Feature, cases string, stdout, stderr io.Writer) error {
	if missing := oracle.Requirements(); len(missing) > 0 {
		return usagef("kernel: this machine lacks %s (make kernel-deps)", strings.Join(missing, ", "))
	}
	cache, err := oracle.CacheDir()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "| kernel | machine (guest shape) | workload | within tolerance | beyond tolerance (real → sim) |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	for i := range ks {
		k := &ks[i]
		label := string(k.Time)
		if own, err := oracle.KernelByName(k.Name); err == nil && own.Era != k.Era {
			label += ", era " + k.Era
		}
		for _, ft := range feats[k.Name] {
			label += ", " + ft.Token()
		}
		type tableCase struct {
			shape int
			w     string
		}
		var todo []tableCase
		if cases == "all" || cases == "fair" {
			for i := range tableShapes {
				for _, w := range tableWorkloads {
					todo = append(todo, tableCase{i, w})
				}
			}
		}
		if cases == "all" || cases == "rt" {
			for _, w := range tableRTWorkloads {
				todo = append(todo, tableCase{0, w})
			}
		}
		if cases == "all" || cases == "dl" {
			for _, w := range tableDLWorkloads {
				todo = append(todo, tableCase{0, w})
			}
		}
		for _, tc := range todo {
			sh, w := tableShapes[tc.shape], tc.w
			spec, err := presets.Machine(sh.preset)
			if err != nil {
				return err
			}
			shape, notes := oracle.ShapeOf(spec).Scale(sh.max)
			fmt.Fprintf(stderr, "kernel table: %s, %s, %s\n", k.Name, shape, w)
			c, err := oracle.Run(ctx, oracle.Options{Kernel: k, Base: spec, Shape: shape, Notes: notes, Workloads: strings.Split(w, " + "),
				Duration: time.Second, Seed: 1, Time: k.Time, Features: feats[k.Name], Cache: cache, Logf: func(string, ...any) {}})
			if ctx.Err() != nil {
				return &interruptedError{"interrupted; the rows above are complete"}
			}
			row := fmt.Sprintf("| %s (%s) | %s: %s (%s) | `%s` |", k.Name, label, sh.preset, sh.what, shape, w)
			var refused *oracle.SimRefusedError
			if errors.As(err, &refused) {
				fmt.Fprintf(stdout, "%s — | the simulation refuses: %s |\n", row, strings.ReplaceAll(refused.Err.Error(), "|", "/"))
				continue
			}
			if err != nil {
				// One table row: the console tail's lines joined, and cut.
				msg := strings.ReplaceAll(strings.Join(strings.Fields(err.Error()), " "), "|", "/")
				if r := []rune(msg); len(r) > 300 {
					msg = string(r[:300]) + "…"
				}
				fmt.Fprintf(stdout, "%s — | failed: %s |\n", row, msg)
				continue
			}
			c.WriteText(stderr) // every measure, not only the row's
			var beyond []string
			ok, judged := 0, 0
			for _, r := range c.Measures {
				switch r.Verdict {
				case "ok":
					ok++
					judged++
				case "differs":
					judged++
					beyond = append(beyond, fmt.Sprintf("%s %.2f → %.2f", r.Name, r.Real, r.Sim))
				}
			}
			if len(beyond) == 0 {
				beyond = []string{"—"}
			}
			counts := fmt.Sprintf("%d vs %d wakeups", c.Real.Wakeups, c.Sim.Wakeups)
			if c.Real.RT != nil || c.Sim.RT != nil {
				rtw := func(m *oracle.Measures) int {
					if m.RT == nil {
						return 0
					}
					return m.RT.Wakeups
				}
				counts += fmt.Sprintf(", %d vs %d RT", rtw(c.Real), rtw(c.Sim))
			}
			fmt.Fprintf(stdout, "%s %d of %d (%s) | %s |\n", row, ok, judged, counts, strings.Join(beyond, "; "))
		}
	}
	return nil
}
