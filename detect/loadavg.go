package detect

import (
	"fmt"
	"os"
)

// LoadAvg is /proc/loadavg's 1-minute figure, -1 when unknown (or not
// Linux). Measurements and twin reports record it before and after.
func LoadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	if _, err := fmt.Sscan(string(data), &l); err != nil {
		return -1
	}
	return l
}
