// Package idempotency makes the effects of at-least-once deliveries happen
// once per business fact.
//
// Before any effect, the Guard records the fact's key in a Store with one
// conditional write: check and record are one atomic step, so of two
// concurrent deliveries exactly one runs the effect. The other finds the record
// and either skips the effect (the fact is COMPLETED: a duplicate, which gets
// the stored result) or is told to retry later (the fact is IN_PROGRESS under a
// valid lease).
//
// Reservations are leases bounded by the invocation's deadline, so the key of
// a crashed worker can be taken over as soon as that worker could no longer be
// running; complete and release are fenced on the reservation's owner token, so
// a worker that outlived its lease can never overwrite or delete the record of
// the worker that took over. The business window is compared by the library
// itself; the TTL attribute only lets DynamoDB clean up, days later.
package idempotency

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// defaultExpiryRetries is the default of Config.ExpiryRetries. The other
// defaults and bounds are package limits', which the runtime contract and
// the constructs read too.
const defaultExpiryRetries = 3

// Config configures a Guard. The zero value of every field but Namespace
// means the documented default.
type Config struct {
	// Namespace prefixes every key ("<namespace>#<key>") so that several
	// consumers, or business data, can share a table. Required; valid UTF-8
	// of at most 1,024 bytes, without '#' (so prefixes never overlap),
	// '*' or '?' (so that IAM can match "<namespace>#*") or control
	// characters.
	Namespace string
	// Window is the business window: how long a completed fact suppresses
	// duplicates, from the moment it was completed. It must be at least
	// LeaseMax, so that no reservation outlives the window it was taken in.
	// Default: 24h.
	Window time.Duration
	// TTLAfterWindow is added to the end of the window to get the record's
	// TTL attribute, used only for DynamoDB clean-up. Default: 24h.
	TTLAfterWindow time.Duration
	// LeaseMax caps the lease of a reservation. The lease ends at the
	// context's deadline (the Lambda deadline) or after LeaseMax, whichever
	// is sooner. It must exceed FinishBudget. Default: 15m (Lambda's longest
	// timeout).
	LeaseMax time.Duration
	// FinishBudget is the time kept at the end of a lease for the write that
	// completes or releases the reservation: the effect's context ends
	// FinishBudget before the lease (which is the invocation's deadline, or
	// earlier), and that write gets FinishBudget of its own. With no more
	// time than FinishBudget left, the guard reserves nothing and returns
	// ErrNotStarted. Default: 2s.
	FinishBudget time.Duration
	// PayloadIgnore lists JSON fields, as dotted paths ("sentAt",
	// "meta.traceId"), left out of the payload hash: fields that change
	// between deliveries of one fact. Default: none.
	PayloadIgnore []string
	// CacheSize is how many completed keys are kept in memory so that
	// repeats skip the store, each for at most a minute (the bound within
	// which a record deleted by an operator, idemctl forget, is forgotten
	// by every warm execution environment); at most 1,000,000. The cache
	// grows as it fills, and also evicts its oldest keys to stay within 64
	// MiB, counting each entry's key, hash and result. Default: 0, no cache.
	CacheSize int
	// MaxResultBytes is the largest result stored with a completed record;
	// a larger one is dropped (Result.DroppedBytes), the fact completed all
	// the same. At most 350,000 bytes, what a DynamoDB item holds beside the
	// record (an HTTP endpoint's stored response is the use); results over
	// 4,096 bytes are not cached. Default: 4,096 bytes, for small results (a
	// receipt id, a resource id) that keep records cheap to write and read.
	MaxResultBytes int
	// ExpiryRetries bounds how often a reservation is retried when the record
	// that blocked it had expired by the time it was read. Default: 3.
	ExpiryRetries int
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// KeySecret, when set, makes the guard store and log a keyed hash of
	// each business key instead of the key: the record's key is
	// "<namespace>#" followed by the base64url HMAC-SHA-256, under
	// KeySecret, of "<namespace>#<key>". The payload hash is keyed too
	// ("k2:", an HMAC-SHA-256 under a key derived from KeySecret), since a
	// payload usually carries its key. Use it when business keys are
	// personal data (an e-mail address, an account number): the table and
	// the adapter's logs then hold no key in plain text and no hash that a
	// guessed key or payload can be checked against, so that without the
	// secret nobody can recover one by hashing likely values. The secret
	// itself must be kept from whoever reads the table and the logs: the
	// construct's secret is in the function's environment, which
	// lambda:GetFunctionConfiguration returns (DESIGN.md, "Hashed keys").
	//
	// What it costs: a key cannot be read back from the table or the logs;
	// to find a fact's record, compute its hash with the secret (Guard.Key).
	// What stays the same: one business key always gives one record key,
	// so duplicates are found across deliveries, and Reservation.Key (the
	// hashed key) is stable across deliveries, to pass downstream as an
	// idempotency key as before.
	//
	// It must be at least 32 random bytes (an HMAC-SHA-256 output), and must not
	// change while records live: a new secret, or turning hashing on or off,
	// gives every fact a new record key and a new Reservation.Key, so a
	// duplicate of a fact processed before the change runs again (downstream
	// too). Change it only when no fact of the last business window can be
	// delivered again.
	//
	// The guard reads KeySecret once, when it is made: a new value reaches
	// a running function only with a new guard, in a new execution
	// environment. Deployed by the construct (HashKeys), the secret is
	// resolved into the function's environment (IDEMPOTENCY_KEY_SECRET) by
	// CloudFormation, through a dynamic reference, when a stack operation
	// creates or updates the function; CloudFormation does not notice a
	// value changed in Secrets Manager by itself. A changed secret thus
	// reaches the function only at the next stack update that updates the
	// function (its dynamic reference, or the function's configuration);
	// Lambda then starts new execution environments with it, and until
	// then the function keeps hashing with the old secret (DESIGN.md,
	// "Hashed keys"). Default: none, keys and payload hashes are stored and
	// logged as they are.
	KeySecret []byte
}

// Guard runs effects at most once per business fact within the business
// window, and exactly once when deliveries are retried until they succeed.
// A Guard is safe for concurrent use.
type Guard struct {
	store  Store
	cfg    Config
	hasher hasher
	cache  *completedCache
}

// NewGuard returns a Guard over store, with cfg's defaults filled in; cfg
// must then keep the rules of Config.Problems, or NewGuard returns an error
// that lists every problem.
func NewGuard(store Store, cfg Config) (*Guard, error) {
	if store == nil {
		return nil, errors.New("idempotency: nil store")
	}
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Guard{store: store, cfg: cfg, hasher: newHasher(cfg.PayloadIgnore, cfg.KeySecret), cache: newCompletedCache(cfg.CacheSize)}, nil
}

// HashesKeys reports whether the guard hashes keys and payloads with a key
// secret (Config.KeySecret): an adapter then leaves out of its log lines
// what may hold a business key that it cannot tell apart (the HTTP
// adapter's request path).
func (g *Guard) HashesKeys() bool { return len(g.cfg.KeySecret) > 0 }

// FinishBudget returns the time the guard keeps at the end of a lease to
// complete or release a reservation (Config.FinishBudget): with no more time
// than this left, it starts nothing.
func (g *Guard) FinishBudget() time.Duration { return g.cfg.FinishBudget }

// Reservation is what an effect learns of the reservation it runs under.
type Reservation struct {
	// Key is the namespaced key of the fact. It is the same for every
	// delivery of the fact: pass it downstream as the idempotency key of an
	// external call (a payment API), so that the call is safe even if the
	// effect runs again after a crash between the call and completion.
	Key string
	// Token is the random owner token of this reservation.
	Token string
	// LeaseUntil is when the reservation may be taken over. The effect's
	// context ends the guard's FinishBudget earlier, so that the reservation
	// can still be completed or released within the lease.
	LeaseUntil time.Time
}

// Effect is the work done once per fact. It returns a small result stored
// for duplicates (at most Config.MaxResultBytes).
type Effect func(ctx context.Context, r Reservation) (result string, err error)

// TxEffect computes a transactional effect: the writes the store commits
// together with the COMPLETED record, and the result stored for duplicates.
// It must not have effects of its own; it may run before the key is known to
// be new, and its writes are discarded if the fact turns out to be a
// duplicate.
type TxEffect func(ctx context.Context, r Reservation) (writes any, result string, err error)

// Result is the outcome of a call and the effect's stored result.
type Result struct {
	// Outcome is outcome.Processed or outcome.Duplicate.
	Outcome outcome.Outcome
	// Value is the effect's result, from this run or from the record.
	Value string
	// FromCache reports a duplicate answered from memory, without the store.
	FromCache bool
	// TookOver reports that the key was held by the reservation of another
	// worker whose lease had ended (a worker that crashed, was killed, or
	// ran out of time mid-effect), and that this call took it over and ran
	// the effect: the effect may already have run before, in part or in
	// full, without its completion being recorded, so that its downstream
	// calls are safe only if made idempotent under Reservation.Key. Set
	// with an error too (the effect failed after the takeover). It is known
	// only when the store reports what its reserve replaced (see
	// ReportReplaced; dynamostore and storetest.MemoryStore do), and not for
	// a reserve the SDK retried after its answer was lost. Never set by
	// RunTx, which reserves nothing.
	TookOver bool
	// LapsedLease is when the lease taken over had ended; zero unless
	// TookOver.
	LapsedLease time.Time
	// DroppedBytes is the size of a result that exceeded MaxResultBytes and
	// was not stored: the fact is processed all the same (its effect never
	// runs again) and its duplicates get an empty Value. Fix the effect to
	// return a smaller result. 0 when nothing was dropped.
	DroppedBytes int
}

// Key returns the record key for a business key: the namespaced key
// "<namespace>#<key>", or its keyed hash with Config.KeySecret. Errors wrap
// ErrInvalidKey; they quote the key only when keys are not hashed. The rules
// are the same either way, so that hashing changes no verdict.
func (g *Guard) Key(key string) (string, error) {
	if err := keyProblem(key, len(g.cfg.KeySecret) > 0); err != nil {
		return "", err
	}
	pk := g.cfg.Namespace + "#" + key
	if len(pk) > limits.MaxKeyBytes {
		return "", fmt.Errorf("%w: %d bytes with the namespace, more than %d", ErrInvalidKey, len(pk), limits.MaxKeyBytes)
	}
	if len(g.cfg.KeySecret) > 0 {
		mac := hmac.New(sha256.New, g.cfg.KeySecret)
		mac.Write([]byte(pk))
		pk = g.cfg.Namespace + "#" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	return pk, nil
}

// Fact identifies one business fact: its namespaced key and the hash of its
// canonical payload. Two deliveries of one fact have equal Key and Hash.
type Fact struct {
	// Key is the namespaced key ("<namespace>#<key>", or the keyed hash of
	// the key with Config.KeySecret): the record's partition key.
	Key string
	// Hash is the payload's hash (see Guard.Fact).
	Hash string
	// Sent, when set, is when the message that carries the fact was first
	// sent: the guard then takes the key only for a message younger than
	// the window (see ErrExpired). Zero: no bound.
	Sent time.Time
	// Replay, when set, says that the message is an operator's deliberate
	// replay of a message that had expired (who, when, why: the adapter's
	// audit text), and is stored with the record the fact's reservation
	// writes (Record.Replay). It changes nothing the guard decides: Sent
	// is then the replay's time, and the conditional write still meets a
	// record that holds the key.
	Replay string
}

// Fact validates key and payload (JSON) and returns their Fact. Errors wrap
// ErrInvalidKey or ErrInvalidPayload: bad input, not worth a retry.
//
// The payload hash is versioned ("v2:…"): SHA-256 of a canonical form in
// which numbers are exact values (5000, 5000.0 and 5e3 are one number) and
// objects have sorted members. A payload holding a lone UTF-16 surrogate
// escape, or an object with a member twice, is invalid: either would make
// two different facts look alike, or one fact look different to two
// decoders.
func (g *Guard) Fact(key string, payload []byte) (Fact, error) {
	pk, err := g.Key(key)
	if err != nil {
		return Fact{}, err
	}
	hash, err := g.hasher.Hash(payload)
	if err != nil {
		return Fact{}, fmt.Errorf("%s: %w", pk, err)
	}
	return Fact{Key: pk, Hash: hash}, nil
}

// Do runs effect once for the fact identified by key and carried by payload
// (JSON; the hash of its canonical form detects a key reused for different
// content). It is Fact followed by Run.
func (g *Guard) Do(ctx context.Context, key string, payload []byte, effect Effect) (Result, error) {
	f, err := g.Fact(key, payload)
	if err != nil {
		return Result{}, err
	}
	return g.Run(ctx, f, effect)
}

// Run runs effect once for the fact f.
//
// It returns Processed after running the effect, or Duplicate with the
// stored result when the fact was already completed. Errors wrap
// ErrInProgress, ErrPayloadMismatch, ErrLeaseLost, ErrNotStarted or
// ErrExpired (the fact's message is as old as the window: Fact.Sent), are an
// ErrEffect (the effect failed; see ErrEffect for what became of the
// reservation), or ErrStore (including a record this release cannot read,
// ErrUnreadableRecord).
func (g *Guard) Run(ctx context.Context, f Fact, effect Effect) (Result, error) {
	var replaced *Record // what the reserve that took the key replaced, if the store says
	reserve := func(ctx context.Context, rec *Record, now time.Time) error {
		replaced = nil
		// The reserve, and a store's retries of it (dynamostore's after a
		// write conflict with another Region), end where the effect's
		// context would: what is left after it is the finishing budget's.
		// Measured on the guard's clock, as the lease is.
		rctx, cancel := context.WithTimeout(ctx, rec.LeaseUntil.Sub(now)-g.cfg.FinishBudget)
		defer cancel()
		return g.store.Reserve(context.WithValue(rctx, replacedKey{}, &replaced), *rec, now)
	}
	return g.run(ctx, f, "reserve", reserve, func(ctx context.Context, rec *Record) (Result, error) {
		res, err := g.runEffect(ctx, rec, effect)
		if replaced != nil && replaced.Status == StatusInProgress && replaced.Owner != rec.Owner {
			res.TookOver, res.LapsedLease = true, replaced.LeaseUntil
		}
		return res, err
	})
}

type replacedKey struct{}

// ReportReplaced is called by a Store's Reserve, with the context it was
// given, when its write replaced a record (one that no longer held the key:
// a reservation whose lease had ended, or a record past its business
// window), so that the guard can tell the takeover of a crashed worker's
// reservation (Result.TookOver) from a new fact. A store that cannot tell
// does not call it: takeovers then go unreported, and nothing else changes.
func ReportReplaced(ctx context.Context, old *Record) {
	if p, ok := ctx.Value(replacedKey{}).(**Record); ok && old != nil {
		rec := *old
		*p = &rec
	}
}

// RunTx is Run for a transactional effect: the effect's writes and the
// COMPLETED record are committed in one atomic request (one round trip, no
// IN_PROGRESS state), so the effect happens exactly once with no window
// between the effect and its record. As with Run, the effect's context ends
// FinishBudget before the lease, leaving time for the commit, and the
// business window starts at the commit. The store must be a TxStore. Writes
// refused by their own condition return an ErrEffect wrapping
// ErrTxRejected; writes the store refuses as invalid, one wrapping
// ErrTxInvalid.
func (g *Guard) RunTx(ctx context.Context, f Fact, effect TxEffect) (Result, error) {
	txs, ok := g.store.(TxStore)
	if !ok {
		return Result{}, ErrNoTransactions
	}
	var (
		computed bool
		writes   any
		res      = Result{Outcome: outcome.Processed}
	)
	commit := func(ctx context.Context, rec *Record, now time.Time) error {
		if !computed {
			ectx, cancel := context.WithDeadline(ctx, rec.LeaseUntil.Add(-g.cfg.FinishBudget))
			var err error
			writes, res.Value, err = callTxEffect(ectx, g.reservation(rec), effect)
			cancel()
			if err != nil {
				return &effectError{err: err}
			}
			res.Value, res.DroppedBytes = g.fitResult(res.Value)
			computed = true
			now = g.cfg.Now() // the commit, and the window, come after the effect
			if err := g.expired(f, now); err != nil {
				return err
			}
			g.setWindow(rec, now)
		}
		rec.Status, rec.LeaseUntil, rec.Result = StatusCompleted, time.Time{}, res.Value
		err := txs.Commit(ctx, *rec, now, writes)
		if errors.Is(err, ErrTxRejected) || errors.Is(err, ErrTxInvalid) {
			return &effectError{err: err}
		}
		return err
	}
	return g.run(ctx, f, "commit", commit, func(_ context.Context, rec *Record) (Result, error) {
		g.remember(rec)
		return res, nil
	})
}

// write makes the conditional write that takes a fact's key with rec, as it
// stands when it returns: a reservation, or a transactional commit. It
// returns a *ConditionFailedError when a record holds the key.
type write func(ctx context.Context, rec *Record, now time.Time) error

// run answers from the cache if it can. Otherwise it makes the write w (op
// names it in errors) until the write takes the key, and then calls took with
// the record written, or until the record that blocked it decides. A record
// that carries this call's own owner token is this call's write, applied by
// a request whose answer was lost and that the SDK sent again: the key is
// taken.
func (g *Guard) run(ctx context.Context, f Fact, op string, w write, took func(ctx context.Context, rec *Record) (Result, error)) (Result, error) {
	pk, hash := f.Key, f.Hash
	if e, ok := g.cache.get(pk, g.cfg.Now()); ok {
		if e.hash != hash {
			return Result{}, fmt.Errorf("%s: %w", pk, ErrPayloadMismatch)
		}
		return Result{Outcome: outcome.Duplicate, Value: e.result, FromCache: true}, nil
	}
	token := newToken()
	var rec Record
	taken := false
	for range g.cfg.ExpiryRetries + 1 {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("%s: %w: %w", pk, ErrNotStarted, err)
		}
		now := g.cfg.Now()
		rec = g.newRecord(ctx, pk, token, hash, now)
		rec.Replay = f.Replay
		if left := rec.LeaseUntil.Sub(now); left <= g.cfg.FinishBudget {
			return Result{}, fmt.Errorf("%s: %w: %v left, no more than the finishing budget %v", pk, ErrNotStarted, left, g.cfg.FinishBudget)
		}
		if err := g.expired(f, now); err != nil {
			return Result{}, fmt.Errorf("%s: %w", pk, err)
		}
		err := w(ctx, &rec, now)
		if err == nil {
			taken = true
			break
		}
		var cf *ConditionFailedError
		if !errors.As(err, &cf) {
			return Result{}, fmt.Errorf("%s: %w", pk, storeError(op, err))
		}
		old := cf.Old
		if old == nil {
			if old, err = g.store.Get(ctx, pk); err != nil {
				return Result{}, fmt.Errorf("%s: %w", pk, storeError("read after a failed condition", err))
			}
			if old == nil {
				continue // released or deleted since: try again
			}
		}
		if err := readable(old, pk); err != nil {
			return Result{}, fmt.Errorf("%s: %w", pk, &storeFailure{op: op, err: err})
		}
		if old.Owner == token {
			taken = true
			break
		}
		if !old.Holds(hash, g.cfg.Now()) {
			continue // expired by the time it was read: try again
		}
		switch {
		case old.PayloadHash != hash:
			return Result{}, fmt.Errorf("%s: %w (stored %s, got %s)", pk, ErrPayloadMismatch, old.PayloadHash, hash)
		case old.Status == StatusCompleted:
			g.remember(old)
			return Result{Outcome: outcome.Duplicate, Value: old.Result}, nil
		default:
			return Result{}, &inProgressError{key: pk, leaseUntil: old.LeaseUntil}
		}
	}
	if !taken {
		return Result{}, fmt.Errorf("%s: %w: the record kept expiring while being read (%d attempts)", pk, ErrInProgress, g.cfg.ExpiryRetries+1)
	}
	res, err := took(ctx, &rec)
	if err != nil {
		return res, fmt.Errorf("%s: %w", pk, err)
	}
	return res, nil
}

// readable returns an error wrapping ErrUnreadableRecord unless old, the
// record a store returned for pk, is one this release can decide on: the
// record of pk, IN_PROGRESS or COMPLETED. A store that reads records of its
// own format refuses what it cannot read already (dynamostore does); this
// check holds for every store.
func readable(old *Record, pk string) error {
	switch {
	case old.Key != pk:
		return fmt.Errorf("%w: the store returned the record of %q for %q", ErrUnreadableRecord, old.Key, pk)
	case old.Status != StatusInProgress && old.Status != StatusCompleted:
		return fmt.Errorf("%w: unknown status %q", ErrUnreadableRecord, old.Status)
	}
	return nil
}

// newRecord returns the IN_PROGRESS record of a new reservation made at now.
// Its lease ends at the context's deadline, capped by LeaseMax; its window
// (moved again at completion) starts now.
func (g *Guard) newRecord(ctx context.Context, pk, token, hash string, now time.Time) Record {
	lease := now.Add(g.cfg.LeaseMax)
	if d, ok := ctx.Deadline(); ok && d.Before(lease) {
		lease = d
	}
	rec := Record{
		Key:         pk,
		Status:      StatusInProgress,
		Owner:       token,
		LeaseUntil:  lease.Truncate(time.Millisecond),
		PayloadHash: hash,
	}
	g.setWindow(&rec, now)
	return rec
}

// setWindow starts rec's business window, and its TTL after it, at now.
func (g *Guard) setWindow(rec *Record, now time.Time) {
	rec.ExpiresAt = now.Add(g.cfg.Window).Truncate(time.Second)
	rec.TTL = rec.ExpiresAt.Add(g.cfg.TTLAfterWindow)
}

func (g *Guard) reservation(rec *Record) Reservation {
	return Reservation{Key: rec.Key, Token: rec.Owner, LeaseUntil: rec.LeaseUntil}
}

// runEffect runs effect under the reservation rec, then completes or
// releases the record. The effect's context ends FinishBudget before the
// lease, and the write that follows gets FinishBudget of its own.
func (g *Guard) runEffect(ctx context.Context, rec *Record, effect Effect) (Result, error) {
	ectx, cancel := context.WithDeadline(ctx, rec.LeaseUntil.Add(-g.cfg.FinishBudget))
	value, err := callEffect(ectx, g.reservation(rec), effect)
	cancel()
	fctx, cancel := g.finishing(ctx)
	defer cancel()
	if err != nil {
		if rerr := g.store.Release(fctx, rec.Key, rec.Owner); rerr != nil {
			return Result{}, &effectError{err: errors.Join(err, fmt.Errorf("release: %w", rerr))}
		}
		return Result{}, &effectError{err: err}
	}
	res := Result{Outcome: outcome.Processed}
	res.Value, res.DroppedBytes = g.fitResult(value)
	rec.Status, rec.Result = StatusCompleted, res.Value
	g.setWindow(rec, g.cfg.Now())
	if err := g.store.Complete(fctx, *rec); err != nil {
		return Result{}, storeError("complete", err)
	}
	g.remember(rec)
	return res, nil
}

// fitResult returns the result to store: value itself, or nothing and the
// size dropped when it exceeds Config.MaxResultBytes.
func (g *Guard) fitResult(value string) (stored string, dropped int) {
	if len(value) > g.cfg.MaxResultBytes {
		return "", len(value)
	}
	return value, 0
}

// storeError wraps a failure of the store in an ErrStore; the store's
// answers about the record (a failed condition, a lost lease, a key its
// table cannot hold: ErrInvalidKey, bad input) and the effect's own
// failures pass as they are.
func storeError(op string, err error) error {
	if errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrExpired) || errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrEffect) {
		return err
	}
	return &storeFailure{op: op, err: err}
}

// finishing returns the context of the write that ends a reservation: it
// survives the cancellation of ctx (an effect that used its whole time must
// still complete or release), bounded by the finishing budget.
func (g *Guard) finishing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), g.cfg.FinishBudget)
}

// callEffect runs effect, turning a panic into an error.
func callEffect(ctx context.Context, r Reservation, effect Effect) (value string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrEffectPanicked, p)
		}
	}()
	return effect(ctx, r)
}

// callTxEffect runs a transactional effect, turning a panic into an error.
func callTxEffect(ctx context.Context, r Reservation, effect TxEffect) (writes any, value string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrEffectPanicked, p)
		}
	}()
	return effect(ctx, r)
}

// MaxResultBytes returns the largest result the guard stores
// (Config.MaxResultBytes, or its default).
func (g *Guard) MaxResultBytes() int { return g.cfg.MaxResultBytes }

// WithLargestResults returns a guard over g's store, with g's configuration
// and cache, that stores results of up to 350,000 bytes (the largest
// Config.MaxResultBytes) whatever g's MaxResultBytes: the guard of an
// adapter whose results are its answers, which every duplicate must get
// whole (package httpkey's responses, package step's outputs), so that the
// bound comes with the adapter rather than with how its guard was built.
// g is unchanged; both may be used at once.
func (g *Guard) WithLargestResults() *Guard {
	c := *g
	c.cfg.MaxResultBytes = limits.LargestResultBytes
	return &c
}

func (g *Guard) remember(rec *Record) {
	if g.cache == nil || len(rec.Result) > limits.DefaultMaxResultBytes {
		return // the cache's memory is bounded for results of at most this size (limits.MaxCacheSize)
	}
	until := rec.ExpiresAt
	if lifetime := g.cfg.Now().Add(limits.CacheLifetime); lifetime.Before(until) {
		until = lifetime // a forget reaches this environment then
	}
	g.cache.put(cacheEntry{key: rec.Key, hash: rec.PayloadHash, result: rec.Result, expiresAt: until})
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
