package growstack

import "testing"

// TestGrowDoesNotAllocate: the frame stays on the stack (a larger array
// would be moved to the heap, and grow nothing).
func TestGrowDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, Grow); n != 0 {
		t.Fatalf("Grow allocates %v times", n)
	}
}
