package handler_test

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
)

// TestTuneGCReadsWithGetenv: TuneGC reads the function's memory through
// the options' WithGetenv, as the entry points do, not the process's
// environment: a main or a local runner that hands the handler its
// environment tunes the collector from the same one.
func TestTuneGCReadsWithGetenv(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
	t.Setenv("GOMEMLIMIT", "")
	env := contract.NewEnv("t", "n")
	env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = "256"
	handler.TuneGC(handler.WithGetenv(env.Getenv))
	if got := debug.SetMemoryLimit(-1); got != 192<<20 {
		t.Errorf("memory limit %d, want %d: three quarters of the 256 MB that WithGetenv's environment gives", got, 192<<20)
	}
}
