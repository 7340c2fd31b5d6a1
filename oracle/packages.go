package oracle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Kernel is a Debian kernel the oracle boots, and the simulator's era
// closest to it.
type Kernel struct {
	Name string // as --kernel names it
	// Package is the pinned package; Pattern finds the newest of the
	// series when the pinned one is gone from the archive.
	Package, Pattern string
	// Era and Knobs make the simulation closest to this kernel: the era
	// whose fair class and wakeup path it has, and the features its
	// features.h turns on (HZ comes from the image's config). Where no
	// era matches
	// the kernel, Note says what differs.
	Era   string
	Knobs []string
	Note  string
	// SchedFeatures are the sched_feat names of the image's
	// kernel/sched/features.h, in its order (read from the image's
	// sched_feat_names, and printed by the guest's features line):
	// --feature takes those that are knobs of the era.
	SchedFeatures []string
	// Time is the guest clock the kernel boots with by default, and
	// TimeNote why, when it is not icount.
	Time     TimeMode
	TimeNote string
}

// Kernels are the kernels --kernel takes, pinned here and only here.
var Kernels = []Kernel{
	{
		Name: "6.1", Package: "linux-image-6.1.0-57-amd64-unsigned", Pattern: `^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$`,
		// 6.1's fair.c is CFS with the v6.x select_idle_sibling and the
		// v5.5+ load balancer: era 6.1 (engine/class.go).
		Era: "6.1",
		SchedFeatures: []string{"GENTLE_FAIR_SLEEPERS", "START_DEBIT", "NEXT_BUDDY", "LAST_BUDDY", "CACHE_HOT_BUDDY",
			"WAKEUP_PREEMPTION", "HRTICK", "HRTICK_DL", "DOUBLE_TICK", "NONTASK_CAPACITY", "TTWU_QUEUE", "SIS_PROP", "SIS_UTIL",
			"WARN_DOUBLE_CLOCK", "RT_PUSH_IPI", "RT_RUNTIME_SHARE", "LB_MIN", "ATTACH_AGE_LOAD", "WA_IDLE", "WA_WEIGHT", "WA_BIAS",
			"UTIL_EST", "UTIL_EST_FASTUP", "LATENCY_WARN", "NI_RANDOM", "ALT_PERIOD", "BASE_SLICE"},
		Note: "era 6.1: CFS with the v6.x wakeup path (SIS_UTIL) and the v5.5+ balancer (not modelled: NI_RANDOM's newidle sampling, UTIL_EST)",
		// Measured 2026-12-01: under single-threaded TCG with -icount
		// (shift=0, sleep=off or on; -cpu max with or without x2apic or
		// monitor) 6.1.192 stops at "smp: Bringing up secondary CPUs";
		// multi-threaded TCG brings up all 8 in 0.4 s of guest time.
		Time:     HostClock,
		TimeNote: "6.1 does not bring up its secondary CPUs under -icount (it stops at \"smp: Bringing up secondary CPUs\"): it runs on multi-threaded TCG with the host's clock, so its runs are not deterministic and its times follow a shared host",
	},
	{
		Name: "6.12", Package: "linux-image-6.12.117+deb12-amd64-unsigned", Pattern: `^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$`,
		// 6.12's fair.c is EEVDF with delayed dequeue, PREEMPT_SHORT and
		// PLACE_REL_DEADLINE: era 6.12 (engine/eevdf612.go, whose "Not
		// modelled" list the Note repeats).
		Era: "6.12",
		SchedFeatures: []string{"PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY", "PREEMPT_SHORT",
			"NEXT_BUDDY", "PICK_BUDDY", "CACHE_HOT_BUDDY", "DELAY_DEQUEUE", "DELAY_ZERO", "WAKEUP_PREEMPTION", "HRTICK", "HRTICK_DL",
			"DOUBLE_TICK", "NONTASK_CAPACITY", "TTWU_QUEUE", "SIS_UTIL", "WARN_DOUBLE_CLOCK", "RT_PUSH_IPI", "RT_RUNTIME_SHARE",
			"LB_MIN", "ATTACH_AGE_LOAD", "WA_IDLE", "WA_WEIGHT", "WA_BIAS", "UTIL_EST", "LATENCY_WARN", "NI_RANDOM"},
		Note: "era 6.12: EEVDF with delayed dequeue, PREEMPT_SHORT, PLACE_REL_DEADLINE and per-task slices (not modelled: the pick with prev still cfs_rq->curr, group entities, the deadline tree's order among equal deadlines)",
		Time: Icount,
	},
}

// KernelByName finds --kernel's kernel.
func KernelByName(name string) (*Kernel, error) {
	var names []string
	for i := range Kernels {
		if Kernels[i].Name == name {
			return &Kernels[i], nil
		}
		names = append(names, Kernels[i].Name)
	}
	return nil, fmt.Errorf("--kernel %q: not a kernel the oracle boots (allowed: %s)", name, strings.Join(names, ", "))
}

// CacheDir is where the kernels are kept: $SCHEDPLAY_KERNEL_CACHE, or
// the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("SCHEDPLAY_KERNEL_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "schedplay", "kernels"), nil
}

// Fetched is a kernel image ready to boot.
type Fetched struct {
	Kernel  *Kernel
	Package string // the package it came from (the pinned one, or the newest)
	Version string // the package's version
	Image   string // vmlinuz
	Config  string // the kernel's config
}

// Fetch returns k's image from the cache, downloading the package (apt-get
// download, no installation) and extracting its /boot into the cache if
// needed; logf says what it does.
func Fetch(k *Kernel, cache string, logf func(string, ...any)) (*Fetched, error) {
	if f, ok := cached(k, cache); ok {
		return f, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	pkg := k.Package
	if err := download(cache, pkg, logf); err != nil {
		newest, nerr := newestPackage(k.Pattern)
		if nerr != nil || newest == pkg {
			return nil, fmt.Errorf("downloading %s: %v", pkg, err)
		}
		logf("%s is not in the archive (%v); taking the newest of the series, %s", pkg, err, newest)
		pkg = newest
		if err := download(cache, pkg, logf); err != nil {
			return nil, fmt.Errorf("downloading %s: %v", pkg, err)
		}
	}
	debs, _ := filepath.Glob(filepath.Join(cache, pkg+"_*.deb"))
	if len(debs) == 0 {
		return nil, fmt.Errorf("apt-get download %s left no .deb in %s", pkg, cache)
	}
	deb := debs[len(debs)-1]
	version, err := exec.Command("dpkg-deb", "-f", deb, "Version").Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg-deb -f %s Version: %v", deb, err)
	}
	dir := filepath.Join(cache, k.Name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Only /boot: the image and its config (the modules are not needed).
	x := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -C "$2" -x ./boot`, "sh", deb, dir)
	if out, err := x.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("extracting %s: %v\n%s", deb, err, out)
	}
	meta := fmt.Sprintf("%s\n%s\n", pkg, strings.TrimSpace(string(version)))
	if err := os.WriteFile(filepath.Join(dir, "package.txt"), []byte(meta), 0o644); err != nil {
		return nil, err
	}
	os.Remove(deb)
	f, ok := cached(k, cache)
	if !ok {
		return nil, fmt.Errorf("%s has no boot/vmlinuz-*", deb)
	}
	return f, nil
}

// cached finds an extracted kernel.
func cached(k *Kernel, cache string) (*Fetched, bool) {
	dir := filepath.Join(cache, k.Name)
	meta, err := os.ReadFile(filepath.Join(dir, "package.txt"))
	if err != nil {
		return nil, false
	}
	imgs, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	cfgs, _ := filepath.Glob(filepath.Join(dir, "boot", "config-*"))
	if len(imgs) != 1 || len(cfgs) != 1 {
		return nil, false
	}
	lines := strings.SplitN(strings.TrimSpace(string(meta)), "\n", 2)
	f := &Fetched{Kernel: k, Image: imgs[0], Config: cfgs[0], Package: lines[0]}
	if len(lines) == 2 {
		f.Version = lines[1]
	}
	return f, true
}

func download(dir, pkg string, logf func(string, ...any)) error {
	logf("apt-get download %s (into %s)", pkg, dir)
	cmd := exec.Command("apt-get", "download", pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, lastLine(string(out)))
	}
	return nil
}

// newestPackage is the highest-versioned package name matching pattern
// (apt-cache's view of the archive).
func newestPackage(pattern string) (string, error) {
	out, err := exec.Command("apt-cache", "search", "--names-only", pattern).Output()
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(pattern)
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(l, " - "); ok && re.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no package matches %s", pattern)
	}
	num := regexp.MustCompile(`\d+`)
	key := func(s string) []int {
		var k []int
		for _, m := range num.FindAllString(s, -1) {
			var n int
			fmt.Sscan(m, &n)
			k = append(k, n)
		}
		return k
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := key(names[i]), key(names[j])
		for x := 0; x < min(len(a), len(b)); x++ {
			if a[x] != b[x] {
				return a[x] < b[x]
			}
		}
		return len(a) < len(b)
	})
	return names[len(names)-1], nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
