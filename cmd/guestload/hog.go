//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"schedplay/engine/cpumask"
	"schedplay/engine/workload"
)

// hog: n threads that spin until stopped (engine/workload's hog), placed
// by the scheduler (place=free), one pinned to the first allowed thread of
// each core in turn (core: the cores as the guest's sysfs lists them), or
// one per allowed CPU (cpu).
type hog struct {
	n     int
	place string
	com   common
	wg    sync.WaitGroup
}

func newHog(r workload.Resolved, c common) (load, int, error) {
	n, _ := strconv.Atoi(r.Values["n"])
	return &hog{n: n, place: r.Values["place"], com: c}, n, nil
}

func (h *hog) start(stop <-chan struct{}) error {
	pins, err := h.pins()
	if err != nil {
		return err
	}
	for i := 0; i < h.n; i++ {
		pin := -1
		if len(pins) > 0 {
			pin = pins[i%len(pins)]
		}
		thread(&h.wg, fmt.Sprintf("hog-%d", i), h.com, pin, func() {
			for {
				for k := 0; k < 1<<16; k++ {
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}
	return nil
}

// pins lists the CPUs the hogs are pinned to in turn (none: free).
func (h *hog) pins() ([]int, error) {
	allowed := h.com.cpus
	if len(allowed) == 0 {
		for cpu := 0; cpu < maxCPU(); cpu++ {
			allowed = append(allowed, cpu)
		}
	}
	switch h.place {
	case "cpu":
		return allowed, nil
	case "core":
		var out []int
		seen := map[string]bool{}
		for _, cpu := range allowed {
			b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu))
			if err != nil {
				return nil, fmt.Errorf("place=core: %v", err)
			}
			if core := strings.TrimSpace(string(b)); !seen[core] {
				seen[core] = true
				out = append(out, cpu)
			}
		}
		return out, nil
	}
	return nil, nil
}

// maxCPU is the number of CPUs the kernel has online (the cpus list of
// sysfs, or the runtime's count).
func maxCPU() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if m, err := cpumask.Parse(strings.TrimSpace(string(b)), 1<<12); err == nil {
			n := 0
			for cpu := 0; cpu < 1<<12; cpu++ {
				if m.Test(cpu) {
					n = cpu + 1
				}
			}
			return n
		}
	}
	return 1
}

func (h *hog) wait() { h.wg.Wait() }

func (h *hog) report() stats { return stats{Kind: "hog", Threads: h.n} }
