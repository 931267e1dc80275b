package chaos

// Two Regions (Config.Regions, issue 43): every fact is delivered in both
// Regions, each with its own queue, workers and failure injection, and the
// guards of both Regions share one table. The Regions are the example app's
// in two Regions (app/platform/regions.go): replicas in us-east-1 and
// us-east-2, the witness in us-west-2.
//
// On a global table in multi-Region strong consistency (MRSC), a strongly
// consistent read returns the latest version of an item whatever the Region
// (DynamoDB Developer Guide, "Multi-Region strong consistency"), and so does
// the check of a conditional write. The simulation models that table as what
// it promises: one linearizable store that both Regions' guards write (the
// memory store, or dynamostore on one kumo table), with
//
//   - per-Region latency: every call of a Region pays its round trip to
//     another replica or the witness (region.rtt), and sometimes a slow
//     replica ("mrsc_slow_replica");
//   - ReplicatedWriteConflictException ("The request was rejected because one
//     or more items in the request are being modified by a request in another
//     Region"): a write of an item that another Region wrote less than the
//     race window (Config.RaceWindow) before is answered with it, and not
//     applied. dynamostore retries it (retryConflicts: at most
//     limits.ConflictAttempts sends, full jitter up to
//     limits.ConflictWaitCap, never past the write's context), then returns
//     an error wrapping dynamostore.ErrReplicatedConflict
//     ("replicated_write_conflict_exhausted"), which the guard takes as any
//     other store error: the record is failed and its message comes back.
//     On dynamostore (kumo) the answer is injected below the store, in the
//     DynamoDB client's HTTP transport (conflictTransport), so the retry is
//     the library's own; on the memory store, which has no such answer,
//     the store's retry is modelled (modelConflicts) with the library's
//     figures on the virtual clock;
//   - Region-local faults: us-east-2 crashes and fails store calls twice
//     as often as us-east-1 (region.scale), and is cut off from the table
//     for a while (region.cutFrom to cutUntil): every store call it makes
//     then fails, nothing written ("region_cut_off"). Its messages are
//     retried after the visibility timeout, never dropped;
//   - no transactions: MRSC supports none, so the transactional consumers
//     (wallet, points, stamps) do not run in this mode; charge does, in
//     both Regions.
//
// The "mrec" sabotage is the guard on a global table in multi-Region
// eventual consistency: two stores, one per Region, each Region's guard on
// its own, a conditional write checked against the local copy only, and every
// write replicated to the other Region after a lag ("typically within a
// second or less", sometimes far longer: "replication_lag_long"; stalled
// while a Region is cut off), applied there last writer wins. The same fact
// reserved in both Regions before either write replicated runs twice.
//
// The double effects of this mode are counted from the reservations the
// store granted (grant): an effect that called the payment provider under a
// reservation granted while another reservation of the same fact was live
// (in progress within its lease, or completed within its window) whose
// effect called it too. The fake provider honours idempotency keys, so it
// absorbs such a second call; a downstream without them would charge twice.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// The two-Region mode's timing and faults.
const (
	// raceWindow is Config.RaceWindow's default: a write of an item less
	// than this after another Region's write of it races that write, and
	// is answered ReplicatedWriteConflictException.
	raceWindow = 50 * time.Millisecond
	// pSlowReplica is the chance that a call of a Region waits for a slow
	// replica (MRSC).
	pSlowReplica = 0.01
	// pLagLong is the chance that an mrec replication takes seconds to a
	// minute instead of under a second.
	pLagLong = 0.02
)

var (
	errReplicatedConflict = errors.New("ReplicatedWriteConflictException: injected: the item is being modified by a request in another Region")
	errCutOff             = errors.New("RequestTimeout: injected: the Region is cut off from the table")
)

// region is one Region of the two-Region mode.
type region struct {
	index int
	name  string
	// rtt is the round trip to another replica or the witness that every
	// MRSC write and strongly consistent read waits for.
	rtt time.Duration
	// scale multiplies the Region's crashes and store faults.
	scale float64
	// The Region is cut off from the table from cutFrom to cutUntil (zero
	// for never).
	cutFrom, cutUntil time.Time

	// mrec only: the Region's replica; stamps the time of the write each
	// of its items holds (last writer wins); inbound the other Region's
	// writes on their way.
	local   *storetest.MemoryStore
	stamps  map[string]time.Time
	inbound []replicated
}

// replicated is a write of one Region on its way to the other (mrec).
type replicated struct {
	due, at time.Time
	key     string
	rec     *idempotency.Record // nil: the item was deleted
}

// cut reports whether the Region is cut off from the table at t.
func (r *region) cut(t time.Time) bool { return !t.Before(r.cutFrom) && t.Before(r.cutUntil) }

// lastWrite is the latest write of an item the store applied, and its Region.
type lastWrite struct {
	region int
	at     time.Time
}

// grant is a reservation the store granted (a reserve that succeeded), and
// what became of it.
type grant struct {
	owner     string
	at, lease time.Time
	// done is when its complete was applied; released when its release
	// was.
	done, released time.Time
	// effect: its effect called the payment provider.
	effect bool
	// overlapping are the grants of the same key that were live when
	// this one was granted.
	overlapping []*grant
}

// live reports whether g holds its key at t, for a window of window.
func (g *grant) live(t time.Time, window time.Duration) bool {
	switch {
	case !g.done.IsZero():
		return t.Before(g.done.Add(window))
	case !g.released.IsZero():
		return false
	}
	return t.Before(g.lease)
}

// RegionsSummary is what the two-Region mode measured (Config.Regions).
type RegionsSummary struct {
	// Table is "mrsc" (one linearizable store) or "mrec" (the sabotage:
	// two stores, replicated last writer wins); "" with one Region.
	Table   string
	Regions []string
	// Deliveries counts the records handed to each Region's consumers.
	Deliveries []int
	// Replicated counts the mrec writes applied in the other Region;
	// Overwritten those that replaced another record there (last writer
	// wins); Stale those dropped, older than the write the item holds.
	Replicated, Overwritten, Stale int
	// DoubleGrants counts the reservations granted while another of the
	// same fact was live.
	DoubleGrants int
	// MostConflicts is the most ReplicatedWriteConflictException answers
	// that one store call's write got (at most limits.ConflictAttempts).
	MostConflicts int
}

// setupRegions makes the two Regions of Config.Regions. For mrec it returns
// the first Region's replica, which the final check reads.
func (s *sim) setupRegions() (idempotency.TxStore, error) {
	span := s.every * time.Duration(s.cfg.Facts)
	cutFrom := epoch.Add(span / 4)
	s.regions = []*region{
		{index: 0, name: "us-east-1", rtt: 15 * time.Millisecond, scale: 1},
		{index: 1, name: "us-east-2", rtt: 25 * time.Millisecond, scale: 2, cutFrom: cutFrom, cutUntil: cutFrom.Add(max(span/2, 3*time.Minute))},
	}
	s.lastWrites = make(map[string]lastWrite)
	s.grants = make(map[string][]*grant)
	s.stats.Regions = RegionsSummary{Table: "mrsc", Deliveries: make([]int, len(s.regions))}
	for _, r := range s.regions {
		s.stats.Regions.Regions = append(s.stats.Regions.Regions, r.name)
	}
	if s.cfg.Sabotage != "mrec" {
		return nil, nil
	}
	if s.cfg.Store != "memory" {
		return nil, fmt.Errorf("chaos: the mrec sabotage runs on the memory store (two replicas), not %q", s.cfg.Store)
	}
	s.stats.Regions.Table = "mrec"
	for _, r := range s.regions {
		r.local = storetest.NewMemoryStore()
		r.local.OmitOld = s.cfg.Seed%2 != 0
		r.stamps = make(map[string]time.Time)
	}
	return s.regions[0].local, nil
}

// regionFaults runs the faults of Region r on a store call before it
// reaches the table: the cut-off, the round trip to another replica (MRSC),
// and, on the memory store, for a write the ReplicatedWriteConflictException
// answers and the store's retries of them (modelConflicts; on dynamostore
// the transport answers them, and the store retries). budget is the virtual
// end of the write's context. A non-nil error is the call's answer: nothing
// was written.
func (s *sim) regionFaults(inv *invocation, r *region, op, key string, budget time.Time) error {
	if r.local != nil {
		return nil // mrec: the local replica answers at once
	}
	if r.cut(s.clock.Now()) {
		s.storeFault("region_cut_off")
		return fmt.Errorf("%s: %w", r.name, errCutOff)
	}
	d := r.rtt
	if s.chance(pSlowReplica * s.scale * r.scale) {
		s.stats.Faults["mrsc_slow_replica"]++
		d += s.between(200*time.Millisecond, 2*time.Second)
	}
	s.park(inv.w.t, d)
	if dead := s.alive(inv); dead != nil {
		return dead
	}
	if op == "get" || s.cfg.Store != "memory" {
		return nil
	}
	return s.modelConflicts(inv, r, op, key, budget)
}

// modelConflicts is dynamostore's retry of ReplicatedWriteConflictException
// (retryConflicts) on the virtual clock, for the memory store: while the
// write of key by Region r races another Region's write, it is answered
// with the conflict and sent again after a wait drawn up to
// limits.ConflictWaitCap, at most limits.ConflictAttempts times in all, and
// no wait is taken that would end at or after budget (the write's context's
// end). Then the error wraps dynamostore.ErrReplicatedConflict, as the
// store's does. The figures are the library's own (package limits); the
// waits come from the run's random source, so that a seed replays.
func (s *sim) modelConflicts(inv *invocation, r *region, op, key string, budget time.Time) error {
	for attempt := 1; s.racing(r, key); attempt++ {
		s.conflictAnswered(inv)
		if attempt == limits.ConflictAttempts {
			return fmt.Errorf("%s %s: %w (%d attempts, the most the store makes): %w", op, key, dynamostore.ErrReplicatedConflict, attempt, errReplicatedConflict)
		}
		wait := s.between(0, limits.ConflictWaitCap(attempt)+1)
		if !budget.IsZero() && !s.clock.Now().Add(wait).Before(budget) {
			return fmt.Errorf("%s %s: %w (%d attempts; the next, after %s, would pass the write's budget): %w", op, key, dynamostore.ErrReplicatedConflict, attempt, wait, errReplicatedConflict)
		}
		if dead := s.wait(inv, wait); dead != nil {
			return dead
		}
	}
	return nil
}

// conflictAnswered counts a write of inv answered
// ReplicatedWriteConflictException.
func (s *sim) conflictAnswered(inv *invocation) {
	s.storeFault("replicated_write_conflict")
	inv.conflicts++
	s.stats.Regions.MostConflicts = max(s.stats.Regions.MostConflicts, inv.conflicts)
}

// racing reports whether a write of key by Region r now races another
// Region's write of it.
func (s *sim) racing(r *region, key string) bool {
	w, ok := s.lastWrites[key]
	return ok && w.region != r.index && s.clock.Now().Sub(w.at) < s.cfg.RaceWindow
}

// inRegion wraps a store call of Region r: on mrec it first applies the
// other Region's writes that have arrived, and replicates the call's change
// of the local record; on both tables it notes a write applied (racing).
func (s *sim) inRegion(r *region, op, key string, apply func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		var before *idempotency.Record
		if r.local != nil {
			s.replicate(ctx, r, false)
			before, _ = r.local.Get(ctx, key)
		}
		err := apply(ctx)
		if err != nil || op == "get" {
			return err
		}
		s.lastWrites[key] = lastWrite{region: r.index, at: s.clock.Now()}
		if r.local != nil {
			after, _ := r.local.Get(ctx, key)
			if !sameRecord(before, after) {
				s.send(r, key, after)
			}
		}
		return nil
	}
}

// sameRecord compares two records as stored, nil for absent.
func sameRecord(a, b *idempotency.Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return same(*a, *b)
}

// send replicates Region r's write of key (rec, nil for a delete) to the
// other Region, after a lag: under a second, sometimes seconds to a
// minute, and not before a cut-off Region is back.
func (s *sim) send(r *region, key string, rec *idempotency.Record) {
	now := s.clock.Now()
	lag := s.between(100*time.Millisecond, time.Second)
	if s.chance(pLagLong * s.scale) {
		s.stats.Faults["replication_lag_long"]++
		lag = s.between(5*time.Second, time.Minute)
	}
	to := s.regions[1-r.index]
	due := now.Add(lag)
	for _, x := range []*region{r, to} {
		if x.cut(now) || x.cut(due) {
			due = x.cutUntil.Add(lag)
		}
	}
	r.stamps[key] = now
	to.inbound = append(to.inbound, replicated{due: due, at: now, key: key, rec: rec})
}

// replicate applies to Region r the other Region's writes that have
// arrived (all of them with everything), oldest first, last writer wins.
func (s *sim) replicate(ctx context.Context, r *region, everything bool) {
	now := s.clock.Now()
	slices.SortStableFunc(r.inbound, func(a, b replicated) int { return a.due.Compare(b.due) })
	n := 0
	for _, w := range r.inbound {
		if !everything && w.due.After(now) {
			break
		}
		n++
		if w.at.Before(r.stamps[w.key]) {
			s.stats.Regions.Stale++
			continue
		}
		r.stamps[w.key] = w.at
		s.stats.Regions.Replicated++
		old, _ := r.local.Get(ctx, w.key)
		if old != nil && (w.rec == nil || !same(*old, *w.rec)) {
			s.stats.Regions.Overwritten++
		}
		if w.rec == nil {
			r.local.Delete(w.key)
		} else {
			_ = r.local.Reserve(ctx, *w.rec, epoch.AddDate(1000, 0, 0)) // over any record: the replica takes the write as is
		}
	}
	r.inbound = slices.Delete(r.inbound, 0, n)
}

// granted notes the answer of a reserve, complete or release of key by
// owner (the reservation's lease for a reserve) in the two-Region mode.
func (s *sim) granted(op, key, owner string, lease time.Time, window time.Duration, err error) {
	if s.grants == nil || err != nil {
		return
	}
	now := s.clock.Now()
	if op == "reserve" {
		g := &grant{owner: owner, at: now, lease: lease}
		for _, o := range s.grants[key] {
			if o.live(now, window) {
				g.overlapping = append(g.overlapping, o)
			}
		}
		if len(g.overlapping) > 0 {
			s.stats.Regions.DoubleGrants++
		}
		s.grants[key] = append(s.grants[key], g)
		return
	}
	for _, g := range s.grants[key] {
		if g.owner != owner {
			continue
		}
		switch {
		case op == "complete" && g.done.IsZero():
			g.done = now
		case op == "release" && g.done.IsZero() && g.released.IsZero():
			g.released = now
		}
	}
}

// paid notes that the effect of reservation r called the payment provider.
func (s *sim) paid(r idempotency.Reservation) {
	for _, g := range s.grants[r.Key] {
		if g.owner == r.Token {
			g.effect = true
		}
	}
}

// grantDoubles reports whether two reservations of key that were live at
// once both called the provider.
func (s *sim) grantDoubles(key string) bool {
	for _, g := range s.grants[key] {
		if !g.effect {
			continue
		}
		for _, o := range g.overlapping {
			if o.effect {
				return true
			}
		}
	}
	return false
}

// checkBothRegions checks, in the two-Region mode, that every fact
// published through the topic was delivered in both Regions.
func (s *sim) checkBothRegions() {
	if s.regions == nil {
		return
	}
	for _, f := range s.facts {
		if f.direct() {
			continue // a misconfigured producer's message, in one queue
		}
		var in [2]bool
		for _, m := range s.byFact[f.index] {
			in[s.regionOf(m.q).index] = true
		}
		if !in[0] || !in[1] {
			s.problem("%s was not delivered in both Regions (%s: %v, %s: %v)", f.id, s.regions[0].name, in[0], s.regions[1].name, in[1])
		}
	}
}

// regionOf returns the Region of queue q.
func (s *sim) regionOf(q *queue) *region {
	for _, c := range s.consumers {
		if c.q == q {
			return c.region
		}
	}
	panic("chaos: a queue without its consumer")
}

// regionsLine is the one-line verdict of the two-Region mode.
func (s *Summary) regionsLine() string {
	r := s.Regions
	return fmt.Sprintf("regions: seed=%d facts=%d table=%s regions=%s deliveries=%d crashes=%d store_faults=%d cut_off=%d write_conflicts=%d conflicts_exhausted=%d slow_replicas=%d replicated=%d lww_overwrites=%d lag_long=%d double_grants=%d double_effects=%d lost=%d stuck=%d violations=%d",
		s.Seed, s.Facts, r.Table, strings.Join(r.Regions, ","), s.Deliveries, s.Crashes, s.StoreFaults, s.Faults["region_cut_off"], s.Faults["replicated_write_conflict"],
		s.Faults["replicated_write_conflict_exhausted"], s.Faults["mrsc_slow_replica"], r.Replicated, r.Overwritten, s.Faults["replication_lag_long"],
		r.DoubleGrants, s.DoubleEffects, s.Lost, s.Stuck, s.Violations)
}
