// Package tbtest is a testing.TB that records failures instead of failing,
// for the kit's tests of its own helpers (a helper that must fail a test is
// run on it, and the test checks what it reported).
package tbtest

import (
	"fmt"
	"testing"
)

// Recorder is a testing.TB whose Error, Errorf, Fatal and Fatalf record the
// message in Failures and return (Fatal does not stop the goroutine); every
// other method is the embedded TB's.
type Recorder struct {
	testing.TB
	Failures []string
}

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Error records a failure.
func (r *Recorder) Error(args ...any) { r.Failures = append(r.Failures, fmt.Sprint(args...)) }

// Fatalf records a failure, and returns.
func (r *Recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// Fatal records a failure, and returns.
func (r *Recorder) Fatal(args ...any) { r.Error(args...) }

// Helper does nothing: the recorded messages carry no file and line.
func (r *Recorder) Helper() {}
