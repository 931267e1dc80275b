package batch

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRunKeepsEachGroupInOrderWithinTheLimit(t *testing.T) {
	// 300 records in 100 groups of 3: at most 4 run at once, each group in
	// batch order, and the records after a failure are told so.
	var groups [][]int
	for g := range 100 {
		groups = append(groups, []int{g, g + 100, g + 200})
	}
	var running, peak atomic.Int32
	var mu sync.Mutex
	seen := map[int][]int{} // by group, in the order run
	told := map[int]bool{}  // record: told an earlier one failed
	Run(groups, 4, func(i int, failed bool) bool {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		mu.Lock()
		seen[i%100] = append(seen[i%100], i)
		told[i] = failed
		mu.Unlock()
		return failed || i%100 != 7 || i >= 100 // group 7 fails at its first record
	})
	if p := peak.Load(); p > 4 || p < 1 {
		t.Fatalf("peak concurrency %d, want 1 to 4", p)
	}
	for g := range 100 {
		if want := []int{g, g + 100, g + 200}; !slices.Equal(seen[g], want) {
			t.Fatalf("group %d ran %v, want %v", g, seen[g], want)
		}
	}
	if !told[107] || !told[207] || told[7] || told[108] {
		t.Fatalf("failures told: 7=%v 107=%v 207=%v 108=%v, want only the records after 7", told[7], told[107], told[207], told[108])
	}
}

func TestRunWithALimitOfOneRunsInBatchOrderOnTheCaller(t *testing.T) {
	groups := [][]int{{0, 2, 4}, {1, 5}, {3}} // record 6 is in no group: it does not run
	var order []int
	Run(groups, 1, func(i int, failed bool) bool {
		order = append(order, i) // no lock: the race detector sees a second goroutine
		return i != 2
	})
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(order, want) {
		t.Fatalf("ran %v, want %v", order, want)
	}
}
