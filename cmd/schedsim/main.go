// Command schedsim runs the schedplay scheduler simulator from the command
// line: list presets and knobs, run a machine with workloads and print the
// results as text, JSON or schbench's own output layout.
//
//	go run ./cmd/schedsim presets
//	go run ./cmd/schedsim knobs
//	go run ./cmd/schedsim run --preset intel-2s-44c-88t --workload schbench:m=2,t=22 --duration 2s
//
// Exit status (README, "Exit status"): 0 ok; 1 a run failed or reproduce
// found a failing check; 2 bad usage or input; 3 an internal error;
// 130 interrupted (SIGINT/SIGTERM).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"schedplay/scenario"
)

// Exit statuses: the command line's contract (README, "Exit status").
const (
	exitOK          = 0
	exitFailed      = 1   // a run failed, or reproduce found a check that failed
	exitUsage       = 2   // bad usage or input, including limits found while building a run
	exitInternal    = 3   // an internal error (a recovered panic)
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM (128+SIGINT, as shells report it)
)

// usageError is a bad command line or bad input: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// interruptedError is a verb stopped by a signal: exit status 130.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }

// errHelp is returned after a verb printed its help on stdout: exit 0.
var errHelp = errors.New("help printed")

const usage = `usage: schedsim <verb> [flags]

verbs:
  presets                 list machine presets (name, kind, title)
  knobs                   list every knob: name, type, default, range, doc
  workloads               list workload kinds and their keys
  run --preset NAME [--workload SPEC]... [--set KNOB=VALUE]... [--duration 10s]
      [--seed N] [--runs N] [--format text|json|csv|schbench|hackbench|perf-bench]
      [--schbench-layout 2016|2019|2023] [--machine-file FILE]
      [--no-wall-time] [--debug] [--trace FILE] [--out FILE] [--force]
  compare --preset NAME --workload SPEC --a "KNOB=V,..." --b "KNOB=V,..." [--runs 5]
          [--out FILE] [--force]
                          two knob sets, same seeds: metric, A, B, B−A, % change,
                          Welch's t-test p (--format text|json|csv)
  sweep --preset NAME --workload SPEC --vary KNOB=a,b --vary workload.KEY=x,y [--seeds 5]
        [--parallel P] [--shard I/N] [--out results.jsonl] [--force]
                          the cartesian product of the --vary values × seeds, or shard I
                          of N of it, one JSON line per run
  merge [--format text|csv|json] [--out FILE] results-*.jsonl
                          per point and metric: n, mean, stdev, 95% CI
  import TRACE [-o FILE] [--format auto|ftrace|perf|chrome] [--keep-kthreads] [--force]
                          turn a scheduler trace (ftrace, trace-cmd report, perf sched
                          script, this simulator's exports) into a workload to replay
                          with --workload trace:file=FILE
  reproduce [--json] [--quick] [--no-wall-time] [--out FILE] [--force] [TARGET...]
                          run the validation experiments (V1..V6): seed figures
                          beside simulated ones, PASS/FAIL per check
  machine detect [-o FILE] [--force] [--quick] [--sysfs DIR]
                          describe this machine as a preset (topology from sysfs, costs
                          measured on pinned threads; --quick skips the measurements)
  kernel --kernel 6.1|6.12 (--preset NAME | --smp sockets=S,cores=C,threads=T[,llcs=L])
         --workload SPEC [--duration 1s] [--time icount|host] [--format text|json]
                          boot Debian's kernel under QEMU on the machine's shape, run the
                          workload there and in the simulation: where wakees land,
                          busy placements, migrations, idle-while-waiting, side by side
  twin [--machine-file FILE | --quick] [--bench pipe,messaging,schbench] [--loops N]
       [--format text|json] [--out FILE]
                          run the real benchmark (perf bench sched pipe/messaging,
                          schbench, or a built-in equivalent) and the simulated one on
                          this machine's preset: both side by side, ratio sim/real

Run "schedsim <verb> -h" for a verb's flags.

exit status: 0 ok; 1 a run failed or a reproduce check failed; 2 bad usage or
input; 3 internal error; 130 interrupted (Ctrl-C).
`

var verbNames = []string{"presets", "knobs", "workloads", "run", "compare", "reproduce", "sweep", "merge", "import", "kernel"}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	watchSignals(cancel)
	os.Exit(runContext(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command line without signal handling (the tests' entry).
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext runs one command line and returns its exit status. ctx ends
// when the user interrupts: the run verbs then stop early and keep what
// they did (or nothing), and the status is 130.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			code = internalError(stderr, args, p)
		}
	}()
	return exitStatus(stderr, dispatch(ctx, args, stdout, stderr))
}

// testHook, when set, is called with the verb before it runs (tests make
// it panic to check the internal-error path).
var testHook func(verb string)

// crashOnVerb is empty in every real build; a test build sets it with
// -ldflags "-X main.crashOnVerb=VERB" so that VERB panics, to check the
// exit status of a real process.
var crashOnVerb string

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no verb given (valid verbs: %s)", strings.Join(verbNames, ", "))
	}
	verb := args[0]
	if testHook != nil {
		testHook(verb)
	}
	if crashOnVerb != "" && verb == crashOnVerb {
		panic("crash requested by the test build (-X main.crashOnVerb)")
	}
	switch verb {
	case "presets":
		return cmdPresets(args[1:], stdout)
	case "knobs":
		return cmdKnobs(args[1:], stdout)
	case "workloads":
		return cmdWorkloads(args[1:], stdout)
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(ctx, args[1:], stdout, stderr)
	case "reproduce":
		return cmdReproduce(args[1:], stdout, stderr)
	case "sweep":
		return cmdSweep(ctx, args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(args[1:], stdout, stderr)
	case "import":
		return cmdImport(args[1:], stdout, stderr)
	case "machine":
		return cmdMachine(ctx, args[1:], stdout, stderr)
	case "twin":
		return cmdTwin(ctx, args[1:], stdout, stderr)
	case "kernel":
		return cmdKernel(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && verb == "help" {
			for _, v := range verbNames {
				if args[1] == v {
					return dispatch(ctx, []string{v, "-h"}, stdout, stderr)
				}
			}
			return usagef("help: unknown verb %q (valid verbs: %s)", args[1], strings.Join(verbNames, ", "))
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	if strings.HasPrefix(verb, "-") {
		return usagef("flag %s given before a verb (usage: schedsim <verb> [flags]; valid verbs: %s)", verb, strings.Join(verbNames, ", "))
	}
	return usagef("unknown verb %q (valid verbs: %s)", verb, strings.Join(verbNames, ", "))
}

// exitStatus reports err on stderr and maps it to the exit status.
func exitStatus(stderr io.Writer, err error) int {
	if err == nil || err == errHelp {
		return exitOK
	}
	fmt.Fprintln(stderr, "schedsim:", err)
	var ue *usageError
	var ie *interruptedError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ie):
		return exitInterrupted
	}
	return exitFailed
}

// internalError reports a recovered panic with the command line that
// reproduces it and the stack, and returns exit status 3.
func internalError(stderr io.Writer, args []string, p any) int {
	stack := debug.Stack()
	if rp, ok := p.(*scenario.RunPanic); ok {
		stack = rp.Stack
	}
	fmt.Fprintf(stderr, "schedsim: internal error: %v; reproduce with: %s\n", p, commandLine(args))
	fmt.Fprintf(stderr, "please report it with the command line above and this stack:\n%s", stack)
	return exitInternal
}

// commandLine renders args as a shell command line that runs them again.
func commandLine(args []string) string {
	parts := []string{"schedsim"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=+:,./@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, " ") }

func (m *multiFlag) repeatable() {}

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
