package engine

import "testing"

// SIS_UTIL's nr_idle_scan, kernel-reference.md §1.7 (Chen Yu's published
// table): util % of an LLC → CPUs to scan, for 112- and 16-CPU LLCs at the
// LLC imbalance_pct of 117.
func TestNrIdleScanTable(t *testing.T) {
	utils := []int64{0, 5, 15, 25, 35, 45, 55, 65, 75, 85, 86}
	want := map[int64][]int64{
		112: {112, 111, 108, 102, 93, 81, 65, 47, 25, 1, 0},
		16:  {16, 15, 15, 14, 13, 11, 9, 6, 3, 0, 0},
	}
	for w, row := range want {
		for i, u := range utils {
			perCPU := u * 1024 / 100
			if got := nrIdleScan(perCPU*w, w, 117); got != row[i] {
				t.Errorf("%d-CPU LLC at %d%%: nr_idle_scan %d, want %d", w, u, got, row[i])
			}
		}
	}
}
