// Command schedsim runs the schedplay scheduler simulator from the command
// line: list presets and knobs, run a machine with workloads and print the
// results as text, JSON or schbench's own output layout.
//
//	go run ./cmd/schedsim presets
//	go run ./cmd/schedsim knobs
//	go run ./cmd/schedsim run --preset intel-2s-44c-88t --workload schbench:m=2,t=22 --duration 2s
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: schedsim <verb> [flags]

verbs:
  presets                 list machine presets (name, kind, title)
  knobs                   list every knob: name, type, default, range, doc
  workloads               list workload kinds and their keys
  run --preset NAME [--workload SPEC]... [--set KNOB=VALUE]... [--duration 10s]
      [--seed N] [--runs N] [--format text|json|schbench] [--machine-file FILE]
      [--no-wall-time] [--debug] [--trace FILE]
  compare --preset NAME --workload SPEC --a "KNOB=V,..." --b "KNOB=V,..." [--runs 5]
                          two knob sets, same seeds: metric, A, B, % change
  reproduce [--json] [--quick] [TARGET...]
                          run the validation experiments (V1..V6): seed figures
                          beside simulated ones, PASS/FAIL per check

Run "schedsim <verb> -h" for a verb's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "presets":
		err = cmdPresets(args[1:], stdout)
	case "knobs":
		err = cmdKnobs(args[1:], stdout)
	case "workloads":
		err = cmdWorkloads(args[1:], stdout)
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "compare":
		err = cmdCompare(args[1:], stdout, stderr)
	case "reproduce":
		err = cmdReproduce(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = usagef("unknown verb %q (valid verbs: presets, knobs, workloads, run, compare, reproduce)", args[0])
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "schedsim:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, " ") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
