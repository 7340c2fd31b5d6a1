package detect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxCPUID bounds a CPU id read from a file, so a corrupt or hostile tree
// cannot make a list allocate without bound.
const maxCPUID = 1 << 16

// parseCPUList parses the kernel's cpulist format ("0-3,8-11", "0,16",
// "" for none), as in cpu/online, */cpulist and *_list files. The result
// is sorted and without duplicates.
func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > maxCPUID {
			return nil, fmt.Errorf("bad CPU list %q: %q is not a CPU id", s, part)
		}
		b := a
		if isRange {
			// "0-15:4" (a stride) is accepted by the kernel's parser but
			// never printed by it; refuse it plainly.
			b, err = strconv.Atoi(hi)
			if err != nil || b < a || b > maxCPUID {
				return nil, fmt.Errorf("bad CPU list %q: %q is not a range", s, part)
			}
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// formatCPUList writes cpus (sorted) in the kernel's cpulist format.
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", cpus[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		}
		i = j + 1
	}
	return b.String()
}

// intersect returns the members of a that are in set.
func intersect(a []int, set map[int]bool) []int {
	var out []int
	for _, c := range a {
		if set[c] {
			out = append(out, c)
		}
	}
	return out
}

// parseSize parses a cache size as sysfs prints it ("32K", "1024K",
// "16M") into KiB.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		s = strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		s, mult = strings.TrimSuffix(s, "M"), 1024
	case strings.HasSuffix(s, "G"):
		s, mult = strings.TrimSuffix(s, "G"), 1024*1024
	default:
		// A bare number is bytes.
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad cache size %q", s)
		}
		return n / 1024, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("bad cache size %q", s)
	}
	return n * mult, nil
}
