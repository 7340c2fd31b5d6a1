package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"schedplay/engine/field"
)

// verbSynopsis is the first lines of each verb's help.
var verbSynopsis = map[string]string{
	"presets":   "usage: schedsim presets\n\nLists the machine and experiment presets: name, kind, title.\n",
	"knobs":     "usage: schedsim knobs [--format text|markdown]\n\nLists every knob: name, type, group, default, range, doc.\n",
	"workloads": "usage: schedsim workloads\n\nLists the workload kinds and their keys.\n",
	"run": "usage: schedsim run --preset NAME [--workload SPEC]... [--set KNOB=VALUE]... [flags]\n" +
		"       schedsim run --link 'URL or #fragment' [--arm A|B|C|D] --duration TIME [flags]\n\n" +
		"Runs the machine with the workloads and prints the results (--format), on stdout or\n" +
		"into --out FILE. Output files are written whole or not at all; an existing one is\n" +
		"replaced only with --force, an input of the run never.\n",
	"compare": "usage: schedsim compare --preset NAME --workload SPEC --a \"KNOB=V,...\" --b \"KNOB=V,...\" [flags]\n\n" +
		"Runs two knob sets on the same seeds and prints metric, A, B and % change.\n",
	"sweep": "usage: schedsim sweep --preset NAME --workload SPEC --vary NAME=a,b [--vary ...] [flags]\n\n" +
		"Runs every combination of the --vary values, each with --seeds seeds, and writes one JSON\n" +
		"line per run (point, seed, metrics) to --out or stdout. --shard I/N runs only the runs k\n" +
		"with k mod N = I-1, so N machines together run the sweep once; merge the files with\n" +
		"schedsim merge. Progress (runs done, failures, ETA) goes to stderr.\n\n" +
		"--out FILE is appended to as each run finishes (one whole line per write, in the order\n" +
		"the runs finish; a complete sweep's file is then rewritten in run order), so a killed\n" +
		"sweep loses only the runs that were running. Run the same command with --resume to run\n" +
		"only the runs missing from FILE: its lines must be this sweep's (same --vary, --seeds,\n" +
		"--seed, --set, --workload, --duration, --preset and --shard; another plan's file is\n" +
		"refused, naming what differs), and a partial last line (a kill mid-write) is dropped\n" +
		"with a message. An existing FILE without --resume is refused; --force empties it.\n",
	"merge": "usage: schedsim merge [--format text|csv|json] [--out FILE] FILE...\n\n" +
		"Aggregates sweep result files (shards in any order): per point and metric n, mean,\n" +
		"stdev and the 95% confidence interval of the mean (Student's t). A run found twice\n" +
		"(overlapping shards) is an error; a partial last line (a sweep killed mid-write) is left\n" +
		"out, with a message.\n",
	"kernel": "usage: schedsim kernel --kernel 6.1|6.12 (--preset NAME | --smp SHAPE) --workload SPEC [flags]\n\n" +
		"Boots the Debian kernel under QEMU on the machine's shape (a preset scaled down, LLC shape kept),\n" +
		"checks that the guest's topology and scheduler domains are the simulated machine's, runs the\n" +
		"workloads there with the sched tracepoints on and in the simulation of the closest era, and\n" +
		"prints the decision measures of both, with a tolerance and a verdict each.\n" +
		"--feature NAME=0|1 (repeatable) sets one of the kernel's sched_feats on both sides: the guest\n" +
		"writes NAME or NO_NAME into /sys/kernel/debug/sched/features before the load (the run fails\n" +
		"unless its features line then shows it), the simulation gets the knob NAME. Only a knob that\n" +
		"is one of the kernel's sched_feats and exists in its era is taken (6.12: DELAY_DEQUEUE,\n" +
		"RUN_TO_PARITY, PLACE_LAG, NEXT_BUDDY, WAKEUP_PREEMPTION, SIS_UTIL, WA_IDLE, ...).\n",
	"reproduce": "usage: schedsim reproduce [--json] [--quick] [--no-wall-time] [--out FILE] [TARGET...]\n\n" +
		"Runs the validation experiments (all, or the TARGETs named: V1, v1-sis-schbench, ...)\n" +
		"and prints seed vs simulated figures and PASS/FAIL per check. Exit status 1 when a\n" +
		"check fails that is not a known_fail.\n",
}

// newFlagSet makes a verb's flag set. It prints nothing itself:
// parseFlags reports errors (naming the flag) and prints the help.
func newFlagSet(verb string) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a verb's arguments. -h/--help prints the verb's help
// on stdout and returns errHelp (exit 0); a bad flag is a usage error.
// withArgs says whether the verb takes positional arguments; its flags
// may then come before and after them (until a "--"), as GNU tools
// allow: "merge a.jsonl --format csv" reads --format as a flag, not as a
// file name. A flag that takes one value (not --workload, --set, --vary)
// given twice with different values is refused: silently keeping the
// last one runs something the command line does not plainly say.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, withArgs bool) error {
	guardRepeats(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				printHelp(stdout, fs)
				return errHelp
			}
			return usagef("%s: %v (see \"schedsim %s -h\")", fs.Name(), err, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if !withArgs {
			return usagef("%s: unexpected argument %q (%s takes no arguments; see \"schedsim %s -h\")", fs.Name(), rest[0], fs.Name(), fs.Name())
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...) // after "--" everything is an argument
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if err := repeatsError(fs); err != nil {
		return err
	}
	if withArgs {
		// Leave the arguments where fs.Args finds them ("--" parses no
		// flag and keeps what follows).
		fs.Parse(append([]string{"--"}, pos...))
	}
	return nil
}

// repeatable is implemented by the flag values that may be given more
// than once (multiFlag: --workload, --set, --vary).
type repeatable interface{ repeatable() }

// onceValue wraps a single-valued flag: a second value that differs from
// the first is kept aside (repeatsError reports it after parsing; an
// error from Set would come out wrapped as "invalid value").
type onceValue struct {
	flag.Value
	given, other string
	set          bool
}

func (o *onceValue) Set(s string) error {
	if o.set {
		if s != o.given && o.other == "" {
			o.other = s
		}
		return nil
	}
	o.set, o.given = true, s
	return o.Value.Set(s)
}

// IsBoolFlag keeps "--force" (without a value) working through the
// wrapper.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// guardRepeats wraps every single-valued flag of fs in a onceValue (once
// per flag set).
func guardRepeats(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Value.(type) {
		case repeatable, *onceValue:
			return
		}
		f.Value = &onceValue{Value: f.Value}
	})
}

// repeatsError names the first single-valued flag given twice with
// different values, or is nil.
func repeatsError(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if o, ok := f.Value.(*onceValue); ok && o.other != "" && err == nil {
			err = usagef("%s: --%s given twice (%s, then %s): give it once (see \"schedsim %s -h\")",
				fs.Name(), f.Name, shellQuote(o.given), shellQuote(o.other), fs.Name())
		}
	})
	return err
}

// printHelp prints a verb's synopsis and flags, each as
// "--name PLACEHOLDER" (the back-quoted word of its usage string).
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, verbSynopsis[fs.Name()])
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nflags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, text := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if placeholder != "" {
			head += " " + placeholder
		}
		if f.DefValue != "" && f.DefValue != "false" {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s\n", head, strings.ReplaceAll(text, "\n", "\n      "))
	})
}

// durationFlag is a --duration: a Go duration ("500ms", "2s"). A bare
// number is refused with the unit it probably lacks; set records that the
// flag was given (an rt-app file's global.duration applies otherwise).
type durationFlag struct {
	d   *time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	if _, err := field.Float("duration", strings.TrimSpace(s), 0, math.MaxFloat64); err == nil {
		return fmt.Errorf("%q has no unit: %s → did you mean %ss (or %sms)?", s, s, strings.TrimSpace(s), strings.TrimSpace(s))
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a duration (write it like 500ms, 2s or 1m30s)", s)
	}
	*f.d = d
	f.set = true
	return nil
}
