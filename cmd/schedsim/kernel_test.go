package main

import (
	"strings"
	"testing"
)

// schedsim kernel's usage errors name the flag and what is allowed; on a
// machine without qemu it exits 2 naming the packages to install.
func TestKernelVerbRefusesByName(t *testing.T) {
	w := []string{"--workload", "schbench:m=1,t=2"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"kernel", "--smp", "sockets=1,cores=2"}, w...), "--kernel is required (allowed: 6.1, 6.12)"},
		{append([]string{"kernel", "--kernel", "5.4", "--smp", "sockets=1,cores=2"}, w...), `--kernel "5.4": not a kernel the oracle boots (allowed: 6.1, 6.12)`},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--time", "kvm"}, w...), `--time "kvm" not allowed (allowed: icount, host)`},
		{[]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2"}, "no --workload given"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--preset", "intel-2s-44c-88t"}, w...), "give one of --preset, --machine-file and --smp"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=3,llcs=2"}, w...), "3 cores per socket do not split into 2 LLCs"},
		{append([]string{"kernel", "--kernel", "6.12"}, w...), "give --preset NAME, --machine-file FILE or --smp"},
		{append([]string{"kernel", "--kernel", "6.12", "--preset", "intel-2s-44c-88t", "--max-cpus", "65"}, w...), "--max-cpus 65 out of range (allowed: 1..64)"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--feature", "SIS_BOUND=1"}, w...), "--feature SIS_BOUND: a knob, but not a sched_feat of kernel 6.12"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--feature", "NOPE=1"}, w...), "--feature NOPE: not a knob (allowed for kernel 6.12: DELAY_DEQUEUE, "},
		{append([]string{"kernel", "--kernel", "6.1", "--smp", "sockets=1,cores=2", "--feature", "NEXT_BUDDY=1"}, w...), "knob NEXT_BUDDY does not exist in era 6.1"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--era", "7.0"}, w...), "--era: knob era: bad value \"7.0\""},
		{append([]string{"kernel", "--kernel", "6.12", "--era", "6.6", "--smp", "sockets=1,cores=2", "--feature", "DELAY_DEQUEUE=0"}, w...), "DELAY_DEQUEUE does not exist in era 6.6"},
		{append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2", "--feature", "DELAY_DEQUEUE=yes"}, w...), `--feature DELAY_DEQUEUE: value "yes" not allowed (allowed: 0, 1)`},
		{[]string{"kernel", "--table", "--kernel", "6.1", "--feature", "DELAY_DEQUEUE=0"}, "not a sched_feat of kernel 6.1"},
		{[]string{"kernel", "--table", "--kernel", "6.1", "--table-cases", "deadline"}, `--table-cases "deadline" not allowed (allowed: all, fair, rt, dl)`},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)", c.args, code, stderr, c.want)
		}
	}
	t.Setenv("PATH", t.TempDir()) // no qemu, gcc, apt-get
	_, stderr, code := runCLI(t, append([]string{"kernel", "--kernel", "6.12", "--smp", "sockets=1,cores=2"}, w...)...)
	if code != exitUsage || !strings.Contains(stderr, "apt-get install qemu-system-x86 busybox-static") || !strings.Contains(stderr, "qemu-system-x86") {
		t.Errorf("without qemu: exit %d, stderr %q", code, stderr)
	}
}
