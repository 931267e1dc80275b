package chaos

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// Injected store errors, named after DynamoDB's.
var (
	errThrottled = errors.New("ProvisionedThroughputExceededException: injected throttling")
	errServer    = errors.New("InternalServerError: injected 500")
	errAmbiguous = errors.New("RequestTimeout: injected; the request took effect but its answer was lost")
)

// faultStore wraps the real store: every call is a turn of the scheduler
// (request leg, the call itself, response leg), may crash the worker before
// and after it, and may fail: throttled or 5xx (nothing written), ambiguous
// (written, but the caller sees an error), retried by the SDK (a write
// applied, its answer lost, the same request sent again: the caller sees the
// second answer), or slow enough that the lease ends while the worker waits.
// Every call that reaches the real store is checked against a model of the
// records (shadow).
type faultStore struct {
	sim    *sim
	inner  idempotency.TxStore
	wallet *wallet // the transactional consumer's, nil for charge
	// region is the consumer's Region in the two-Region mode (nil with
	// one), window its business window.
	region *region
	window time.Duration
}

var _ idempotency.TxStore = (*faultStore)(nil)

// call runs apply, the real store call, under the faults. owner is the
// reservation a complete or release ends ("" for the other calls). budget
// is the virtual end of the write's context: the guard gives its writes
// contexts whose deadlines are its budgets, in real time, which means
// nothing on the virtual clock; the reserve's ends finishBudget before the
// lease (Reserve passes rec.LeaseUntil-finishBudget), a complete's or
// release's finishBudget after it is sent (finishEnd); a get and the
// transactional commit have none (zero).
func (fs *faultStore) call(ctx context.Context, op, key, owner string, budget time.Time, apply func(ctx context.Context) error) error {
	s := fs.sim
	inv, err := s.enter(ctx, op, key)
	if err != nil {
		return err
	}
	inv.conflicts, inv.conflictAt = 0, time.Time{}
	if owner != "" {
		s.finishing(op, key, owner)
	}
	s.stats.StoreCalls++
	if dead := s.maybeCrash(inv, "before_"+op, pCrash); dead != nil {
		return dead
	}
	// The request is in flight: it lands even if the invocation dies
	// meanwhile.
	s.storeLeg(inv, "store_spike_request")
	inner := context.WithoutCancel(ctx) // real-time deadlines mean nothing here
	var regionErr error
	if r := fs.region; r != nil {
		apply = s.inRegion(r, op, key, apply)
		if regionErr = s.regionFaults(inv, r, op, key, budget); inv.dead {
			return regionErr
		}
	}
	switch x := s.rng.Float64() / (s.scale * fs.regionScale()); {
	case regionErr != nil:
		err = regionErr
	case x < pThrottle:
		s.storeFault("store_throttle")
		err = errThrottled
	case x < pThrottle+pServer:
		s.storeFault("store_5xx")
		err = errServer
	case x < pThrottle+pServer+pAmbiguous:
		if err = apply(inner); err == nil {
			s.storeFault("store_ambiguous")
			err = errAmbiguous
		}
	case x < pThrottle+pServer+pAmbiguous+pSDKRetry && op != "get":
		s.sdkRetry = true
		err = apply(inner)
		s.sdkRetry = false
		if err == nil {
			// The answer is lost (a 500, a reset connection); the SDK's
			// retryer backs off and sends the same request again, and the
			// guard sees only the second answer.
			s.storeFault("store_sdk_retry:" + op)
			s.park(inv.w.t, s.between(5*time.Millisecond, 100*time.Millisecond))
			err = apply(inner)
			inv.retried[key] = append(inv.retried[key], retry{op: op, err: err})
		}
	default:
		err = apply(inner)
	}
	if errors.Is(err, dynamostore.ErrReplicatedConflict) {
		s.stats.Faults["replicated_write_conflict_exhausted"]++
	}
	if dead := s.alive(inv); dead != nil {
		return dead
	}
	s.storeLeg(inv, "store_spike_response")
	if dead := s.alive(inv); dead != nil {
		return dead
	}
	if dead := s.maybeCrash(inv, "after_"+op, pCrash); dead != nil {
		return dead
	}
	return err
}

// finishEnd is the virtual end of the context of a complete or release
// sent now: the guard's finishing budget.
func (s *sim) finishEnd() time.Time { return s.clock.Now().Add(finishBudget) }

// regionScale is the store's Region's fault multiplier, 1 with one Region.
func (fs *faultStore) regionScale() float64 {
	if fs.region == nil {
		return 1
	}
	return fs.region.scale
}

func (s *sim) storeLeg(inv *invocation, kind string) {
	d, spiked := s.latency(pSpike, kind)
	if spiked {
		s.stats.StoreFaults++
	}
	s.park(inv.w.t, d)
}

func (s *sim) storeFault(kind string) {
	s.stats.StoreFaults++
	s.stats.Faults[kind]++
}

func (fs *faultStore) Reserve(ctx context.Context, rec idempotency.Record, now time.Time) error {
	return fs.call(ctx, "reserve", rec.Key, "", rec.LeaseUntil.Add(-finishBudget), func(ctx context.Context) error {
		if fs.sim.cfg.Sabotage == "blocking-store" {
			// A call that never answers, waiting outside the
			// scheduler: until the run gives up.
			<-fs.sim.sched.stop
			runtime.Goexit()
		}
		rec := rec
		if fs.sim.sdkRetry && fs.sim.cfg.Sabotage == "foreign-retry" {
			rec.Owner = "foreign-" + rec.Owner
		}
		err := fs.inner.Reserve(ctx, rec, now)
		fs.sim.shadow.put("reserve", rec, now, err)
		fs.sim.granted("reserve", rec.Key, rec.Owner, rec.LeaseUntil, fs.window, err)
		return err
	})
}

func (fs *faultStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	var got *idempotency.Record
	err := fs.call(ctx, "get", key, "", time.Time{}, func(ctx context.Context) error {
		var err error
		got, err = fs.inner.Get(ctx, key)
		fs.sim.shadow.get(key, got, err)
		return err
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

func (fs *faultStore) Complete(ctx context.Context, rec idempotency.Record) error {
	sent := fs.sim.clock.Now()
	return fs.call(ctx, "complete", rec.Key, rec.Owner, fs.sim.finishEnd(), func(ctx context.Context) error {
		var err error
		if fs.sim.cfg.Sabotage == "unfenced-complete" {
			// Like every Powertools port: the completion overwrites
			// whatever record holds the key.
			forced := rec
			forced.LeaseUntil = time.Time{}
			err = fs.inner.Reserve(ctx, forced, epoch.AddDate(1000, 0, 0))
		} else {
			err = fs.inner.Complete(ctx, rec)
		}
		fs.sim.shadow.complete(ctx, fs.inner, rec, sent, err)
		fs.sim.granted("complete", rec.Key, rec.Owner, time.Time{}, fs.window, err)
		if err == nil {
			ctx.Value(invKey{}).(*invocation).completed++
		}
		return err
	})
}

func (fs *faultStore) Release(ctx context.Context, key, owner string) error {
	return fs.call(ctx, "release", key, owner, fs.sim.finishEnd(), func(ctx context.Context) error {
		err := fs.inner.Release(ctx, key, owner)
		fs.sim.shadow.release(key, owner, err)
		fs.sim.granted("release", key, owner, time.Time{}, fs.window, err)
		return err
	})
}

// Commit commits a transactional effect. On the memory store the wallets'
// writes come as a memTx, refused as dynamostore refuses a transaction with
// more than dynamostore.MaxTxWrites writes: an error wrapping
// idempotency.ErrTxInvalid, nothing written, whatever record holds the key.
// AcceptsWrites asks the real store; it is no request.
func (fs *faultStore) AcceptsWrites(writes any) error { return fs.inner.AcceptsWrites(writes) }

func (fs *faultStore) Commit(ctx context.Context, rec idempotency.Record, now time.Time, writes any) error {
	sent := fs.sim.clock.Now()
	tx, isMem := writes.(memTx)
	if isMem {
		writes = tx.apply
	}
	return fs.call(ctx, "commit", rec.Key, "", time.Time{}, func(ctx context.Context) error {
		var err error
		if isMem && tx.writes > dynamostore.MaxTxWrites {
			err = fmt.Errorf("%w: chaos: %d transactional writes, at most %d (refused as dynamostore refuses them)", idempotency.ErrTxInvalid, tx.writes, dynamostore.MaxTxWrites)
		} else {
			err = fs.inner.Commit(ctx, rec, now, writes)
		}
		fs.sim.shadow.put("commit", rec, now, err)
		if err == nil {
			fs.sim.shadow.completed(rec.Key, sent)
			ctx.Value(invKey{}).(*invocation).completed++
			if fs.wallet != nil {
				fs.wallet.committed(rec.Owner, sent)
			}
		}
		return err
	})
}

// shadow is the model of the idempotency records: what the store must hold
// after every call that reached it. Calls reach the store one at a time (only
// the running task calls), so the model is exact; every answer of the store is
// checked against it, and so is every write: a reservation only over a record
// that is not live, a complete or release only by the record's current owner.
type shadow struct {
	sim  *sim
	recs map[string]idempotency.Record
	// completions are the times the completing writes (complete, commit)
	// that the store applied were sent, by key: where the guard starts the
	// business window.
	completions map[string][]time.Time
}

// completed records a completing write of key, sent at sent, that the store
// applied.
func (sh *shadow) completed(key string, sent time.Time) {
	sh.completions[key] = append(sh.completions[key], sent)
}

// put models a reserve or a commit: rec is written unless a record holds
// its key for rec's payload.
func (sh *shadow) put(op string, rec idempotency.Record, now time.Time, err error) {
	s := sh.sim
	old, had := sh.recs[rec.Key]
	live := had && old.Holds(rec.PayloadHash, now)
	var cf *idempotency.ConditionFailedError
	switch {
	case err == nil:
		if live {
			s.problem("%s %s succeeded over a live record (%s)", op, rec.Key, describe(old, had))
		}
		if left := rec.LeaseUntil.Sub(now); op == "reserve" && left <= finishBudget {
			s.problem("reserve %s with %v of the lease left, no more than the finishing budget %v", rec.Key, left, finishBudget)
		}
		if had && old.Status == idempotency.StatusInProgress {
			s.stats.Takeovers++
		}
		sh.recs[rec.Key] = rec
	case errors.As(err, &cf):
		if !live {
			s.problem("%s %s refused, but no live record holds the key (%s)", op, rec.Key, describe(old, had))
		}
		if cf.Old != nil && (!had || !same(*cf.Old, old)) {
			s.problem("%s %s: the store returned %+v as the old record, the model holds %+v", op, rec.Key, *cf.Old, old)
		}
	case op == "commit" && errors.Is(err, idempotency.ErrTxInvalid):
		// The effect's writes refused as invalid: nothing written.
		s.stats.TxRefused++
	case unsent(err):
	default:
		s.problem("%s %s: unexpected store error: %v", op, rec.Key, err)
	}
}

func (sh *shadow) get(key string, got *idempotency.Record, err error) {
	want, had := sh.recs[key]
	switch {
	case err != nil:
		sh.sim.problem("get %s: unexpected store error: %v", key, err)
	case got == nil && had, got != nil && (!had || !same(*got, want)):
		sh.sim.problem("get %s read %+v, the model holds %s", key, got, describe(want, had))
	}
}

func (sh *shadow) complete(ctx context.Context, inner idempotency.Store, rec idempotency.Record, sent time.Time, err error) {
	s := sh.sim
	cur, had := sh.recs[rec.Key]
	switch {
	case err == nil && (!had || cur.Owner != rec.Owner):
		s.problem("complete %s by a stale owner succeeded: the record was %s, so the newer owner's record was overwritten", rec.Key, describe(cur, had))
		sh.resync(ctx, inner, rec.Key)
	case err == nil:
		cur.Status, cur.Result, cur.LeaseUntil = idempotency.StatusCompleted, rec.Result, time.Time{}
		cur.ExpiresAt, cur.TTL = rec.ExpiresAt, rec.TTL // the window starts at completion
		sh.recs[rec.Key] = cur
		sh.completed(rec.Key, sent)
	case errors.Is(err, idempotency.ErrLeaseLost) && had && cur.Owner == rec.Owner:
		s.problem("complete %s refused its current owner", rec.Key)
	case errors.Is(err, idempotency.ErrLeaseLost):
		s.stats.StaleRejected++
	case unsent(err):
	default:
		s.problem("complete %s: unexpected store error: %v", rec.Key, err)
	}
}

func (sh *shadow) release(key, owner string, err error) {
	s := sh.sim
	cur, had := sh.recs[key]
	mine := had && cur.Owner == owner && cur.Status == idempotency.StatusInProgress
	switch {
	case err == nil && !had:
		// Already released (a retried release), or released by the
		// owner that took over: nothing to delete, nothing harmed.
	case err == nil && !mine:
		s.problem("release %s by a stale owner succeeded: the record was %s", key, describe(cur, had))
		delete(sh.recs, key)
	case err == nil:
		delete(sh.recs, key)
	case errors.Is(err, idempotency.ErrLeaseLost) && mine:
		s.problem("release %s refused its current owner", key)
	case errors.Is(err, idempotency.ErrLeaseLost):
		s.stats.StaleRejected++
	case unsent(err):
	default:
		s.problem("release %s: unexpected store error: %v", key, err)
	}
}

// unsent reports whether err is the answer of a write that wrote nothing
// and is no fault of the store's: dynamostore gave up on
// ReplicatedWriteConflictException (dynamostore.ErrReplicatedConflict), or
// the invocation died while the store waited to send it again
// (conflictTransport).
func unsent(err error) bool {
	return errors.Is(err, dynamostore.ErrReplicatedConflict) || errors.Is(err, errCrashed)
}

// resync reloads a record the model lost track of (after a violation).
func (sh *shadow) resync(ctx context.Context, inner idempotency.Store, key string) {
	rec, err := inner.Get(ctx, key)
	switch {
	case err != nil:
		sh.sim.problem("resync %s: %v", key, err)
	case rec == nil:
		delete(sh.recs, key)
	default:
		sh.recs[key] = *rec
	}
}

// same compares records as stored: times at the precision the stores keep.
func same(a, b idempotency.Record) bool {
	return a.Key == b.Key && a.Status == b.Status && a.Owner == b.Owner && a.PayloadHash == b.PayloadHash && a.Result == b.Result &&
		a.LeaseUntil.UnixMilli() == b.LeaseUntil.UnixMilli() && a.ExpiresAt.Unix() == b.ExpiresAt.Unix() && a.TTL.Unix() == b.TTL.Unix()
}
