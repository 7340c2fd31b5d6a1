package oracle

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"schedplay/engine/workload"
)

// The guest's userland: busybox (the static build Debian packages as
// busybox-static) for the shell and its tools, the project's own guest
// load (guest/guestload.c, built static by the host's gcc), and an /init script
// that reports the guest's view of its topology, traces the scheduler
// while the load runs and powers off. Everything the host reads comes
// over the second serial port (/dev/ttyS1), framed by marker lines; the
// first (ttyS0) is the kernel's console.

// The markers framing the guest's report on ttyS1.
const (
	markTopology = "=== schedplay topology ==="
	markLoad     = "=== schedplay load ==="
	markTrace    = "=== schedplay trace gzip" // then the byte count, " ===", a newline and the bytes
	markEnd      = "=== schedplay end ==="
)

// traceEvents are the sched tracepoints the guest records.
var traceEvents = []string{"sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_switch",
	"sched_migrate_task", "sched_process_fork", "sched_process_exit"}

// initScript is /init: the %s and %d are, in order, the --feature writes
// (featureWrites), the trace buffer's size per CPU, the trace events
// (space-separated) and the guest load's arguments. The writes come
// before the features line, which shows what took.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
out=/dev/ttyS1
# Raw: no "\n" → "\r\n", so the gzip'd trace crosses unchanged.
stty -F $out raw -echo
T=/sys/kernel/tracing
{
echo "` + markTopology + `"
%secho "uname $(uname -r)"
echo "ncpu $(ls -d /sys/devices/system/cpu/cpu[0-9]* | wc -l)"
for c in /sys/devices/system/cpu/cpu[0-9]*; do
  n=${c##*cpu}
  t=$c/topology
  l3=$(cat $c/cache/index3/shared_cpu_list 2>/dev/null)
  node=$(ls -d $c/node* 2>/dev/null | head -n 1)
  echo "cpu $n package $(cat $t/physical_package_id) die $(cat $t/die_id 2>/dev/null) core $(cat $t/core_id) siblings $(cat $t/thread_siblings_list) l3 ${l3:--} node ${node##*node}"
done
for d in /sys/devices/system/node/node[0-9]*; do
  [ -d $d ] && echo "node ${d##*node} cpus $(cat $d/cpulist) distance $(cat $d/distance)"
done
grep -E "^(cpu|domain)" /proc/schedstat | cut -d" " -f1-3
echo "features $(cat /sys/kernel/debug/sched/features 2>/dev/null)"
echo "cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
for s in /sys/devices/system/cpu/cpu0/cpuidle/state[0-9]*; do
  [ -d $s ] && echo "idlestate $(cat $s/name) $(cat $s/latency) $(cat $s/residency) $(cat $s/disable)"
done
for f in base_slice_ns migration_cost_ns nr_migrate tunable_scaling; do
  [ -f /sys/kernel/debug/sched/$f ] && echo "tunable $f $(cat /sys/kernel/debug/sched/$f)"
done
} > $out
echo 0 > $T/tracing_on
echo global > $T/trace_clock
echo %d > $T/buffer_size_kb
for e in %s; do echo 1 > $T/events/sched/$e/enable; done
echo "` + markLoad + `" > $out
echo 1 > $T/tracing_on
/bin/guestload %s > /tmp/load.out 2>&1
echo "exit $?" >> /tmp/load.out
echo 0 > $T/tracing_on
cat /tmp/load.out > $out
# The trace gzip'd: the serial port moves about 100 KB of guest output a
# second of wall time; text trace compresses about ten times.
gzip -c $T/trace > /tmp/trace.gz
echo "` + markTrace + ` $(wc -c < /tmp/trace.gz) ===" > $out
cat /tmp/trace.gz > $out
echo > $out
echo "` + markEnd + `" > $out
sync
poweroff -f
`

// initramfsOptions say what goes in.
type initramfsOptions struct {
	Busybox   string   // the static busybox binary
	GuestLoad []byte   // guest/guestload.c, compiled static
	LoadArgs  []string // its arguments
	BufferKB  int      // trace buffer per CPU
	Features  []Feature
}

// schedFeaturesFile is where the guest sets its sched_feats
// (CONFIG_SCHED_DEBUG, debugfs mounted by /init).
const schedFeaturesFile = "/sys/kernel/debug/sched/features"

// featureWrites are /init's lines that write each feature's token into
// sched/features and report each write ("featureset TOKEN ok|failed").
func featureWrites(fs []Feature) string {
	var b strings.Builder
	for _, f := range fs {
		t := f.Token()
		fmt.Fprintf(&b, "if echo %s > %s; then echo \"featureset %s ok\"; else echo \"featureset %s failed\"; fi\n", t, schedFeaturesFile, t, t)
	}
	return b.String()
}

// buildInitramfs returns the gzip'd cpio archive.
func buildInitramfs(o initramfsOptions) ([]byte, error) {
	bb, err := os.ReadFile(o.Busybox)
	if err != nil {
		return nil, fmt.Errorf("busybox: %v (apt-get install busybox-static)", err)
	}
	a := newArchive()
	for _, d := range []string{"bin", "dev", "proc", "sys", "tmp", "sys/kernel/debug", "sys/kernel/tracing"} {
		a.dir(d)
	}
	a.file("bin/busybox", 0o755, bb)
	a.symlink("bin/sh", "busybox")
	a.file("bin/guestload", 0o755, o.GuestLoad)
	args := make([]string, len(o.LoadArgs))
	for i, s := range o.LoadArgs {
		args[i] = shellQuote(s)
	}
	a.file("init", 0o755, []byte(fmt.Sprintf(initScript, featureWrites(o.Features), o.BufferKB, strings.Join(traceEvents, " "), strings.Join(args, " "))))
	var out bytes.Buffer
	if err := a.write(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// shellQuote quotes s for the guest's sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// guestLoadC is the guest load's source (guest/guestload.c).
//
//go:embed guest/guestload.c
var guestLoadC []byte

// guestKinds are the workload kinds the guest load runs.
var guestKinds = map[string]bool{"schbench": true, "hackbench": true, "pipe": true, "hog": true, "cyclictest": true}

// simOnlyKeys shape the simulator's cost model and mean nothing to a real
// thread: the guest load does not get them.
var simOnlyKeys = map[string]bool{"smt_pressure": true, "wss_kb": true}

// buildGuestLoad compiles the guest load with the host's gcc, static
// (the guest has no libc).
func buildGuestLoad() ([]byte, error) {
	dir, err := os.MkdirTemp("", "schedplay-guestload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, out := filepath.Join(dir, "guestload.c"), filepath.Join(dir, "guestload")
	if err := os.WriteFile(src, guestLoadC, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("gcc", "-O2", "-static", "-pthread", "-o", out, src)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcc -static guestload.c: %v\n%s", err, b)
	}
	return os.ReadFile(out)
}

// guestLoadArgs are the guest load's arguments for the workloads: every
// key with its value as the simulator's parser resolves it (the same
// defaults on both sides).
func guestLoadArgs(d time.Duration, specs []workload.Resolved) ([]string, error) {
	args := []string{fmt.Sprint(d.Nanoseconds())}
	for i, r := range specs {
		if !guestKinds[r.Kind] {
			return nil, fmt.Errorf("workload %s: the guest load runs schbench, hackbench, pipe, hog and cyclictest", r.Kind)
		}
		if r.Values["latency_nice"] != "0" {
			return nil, fmt.Errorf("workload %s: latency_nice=%s: the guest's kernel has no latency-nice (a patch set, not mainline)", r.Kind, r.Values["latency_nice"])
		}
		if i > 0 {
			args = append(args, "--")
		}
		args = append(args, r.Kind)
		var keys []string
		for k := range r.Values {
			// The guest load reads the dl_* keys only with
			// policy=deadline (sched_setattr), so only then are they
			// passed.
			if !simOnlyKeys[k] && k != "latency_nice" && (!strings.HasPrefix(k, "dl_") || r.Values["policy"] == "deadline") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			args = append(args, k+"="+r.Values[k])
		}
	}
	return args, nil
}
