package build

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: the target and the memory limit are set from the function's
// memory, and GOGC or GOMEMLIMIT, when set, win.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	for name, tc := range map[string]struct {
		env     map[string]string
		percent int
		limit   int64
	}{
		"a function of 256 MB":    {map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, GCPercent, 192 << 20},
		"outside Lambda":          {map[string]string{}, GCPercent, math.MaxInt64},
		"GOGC and GOMEMLIMIT set": {map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "GOGC": "50", "GOMEMLIMIT": "1GiB"}, 100, math.MaxInt64},
	} {
		t.Run(name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			TuneGC(func(k string) string { return tc.env[k] })
			if got := debug.SetGCPercent(100); got != tc.percent {
				t.Errorf("GC percent %d, want %d", got, tc.percent)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("memory limit %d, want %d", got, tc.limit)
			}
		})
	}
}
