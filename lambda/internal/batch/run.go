package batch

import "sync"

// Run runs a batch's records: next(i, failed) runs record i, told whether
// an earlier record of its group failed, and says whether it succeeded.
// groups holds the records' indexes by group, each in batch order, the
// groups in the order of their first record; a record in no group does not
// run.
//
// With a limit of 1 every record runs in batch order on the calling
// goroutine: the effect of a record starts after the previous one has
// ended, and no goroutine is started. Otherwise at most limit workers take
// the groups in order, each running its group to the end: a batch of
// thousands of records starts limit goroutines, not one per group.
func Run(groups [][]int, limit int, next func(i int, failed bool) bool) {
	if limit <= 0 || limit > len(groups) {
		limit = len(groups)
	}
	if limit <= 1 {
		inOrder(groups, next)
		return
	}
	work := make(chan []int)
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for g := range work {
				runGroup(g, next)
			}
		})
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	wg.Wait()
}

// runGroup runs a group's records in order, each told whether one before it
// failed.
func runGroup(g []int, next func(i int, failed bool) bool) {
	failed := false
	for _, i := range g {
		failed = !next(i, failed) || failed
	}
}

// inOrder runs every record of the groups in batch order.
func inOrder(groups [][]int, next func(i int, failed bool) bool) {
	n := 0
	for _, g := range groups {
		for _, i := range g {
			n = max(n, i+1)
		}
	}
	groupOf := make([]int, n)
	for i := range groupOf {
		groupOf[i] = -1
	}
	for gi, g := range groups {
		for _, i := range g {
			groupOf[i] = gi
		}
	}
	failed := make([]bool, len(groups))
	for i, gi := range groupOf {
		if gi >= 0 {
			failed[gi] = !next(i, failed[gi]) || failed[gi]
		}
	}
}
