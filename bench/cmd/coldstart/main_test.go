package main

import (
	"testing"
	"time"
)

// TestParseInitTrace: the runtime's inittrace lines give each package's
// clock time and when the last initialiser ended; other lines are skipped.
func TestParseInitTrace(t *testing.T) {
	trace := parseInitTrace([]byte(`init runtime @0.25 ms, 0.19 ms clock, 0 bytes, 0 allocs
init github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas @4.8 ms, 2.3 ms clock, 586696 bytes, 3151 allocs
a line of the bootstrap's own
init net/http @12 ms, 0.10 ms clock, 4712 bytes, 49 allocs
`))
	want := map[string]time.Duration{"runtime": 190 * time.Microsecond, "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas": 2300 * time.Microsecond, "net/http": 100 * time.Microsecond}
	if len(trace.clock) != len(want) {
		t.Fatalf("packages %v; want %v", trace.clock, want)
	}
	for p, d := range want {
		if got := trace.clock[p]; got.Round(time.Microsecond) != d {
			t.Errorf("%s: %v; want %v", p, got, d)
		}
	}
	if end := trace.end.Round(time.Microsecond); end != 12100*time.Microsecond {
		t.Errorf("the last initialiser ended at %v; want 12.1ms", end)
	}
	if total := trace.total().Round(time.Microsecond); total != 2590*time.Microsecond {
		t.Errorf("total %v; want 2.59ms", total)
	}
}
