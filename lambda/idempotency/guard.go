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
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Defaults of Config's zero values.
const (
	DefaultWindow         = 24 * time.Hour
	DefaultTTLAfterWindow = 24 * time.Hour
	DefaultLeaseMax       = 15 * time.Minute
	DefaultExpiryRetries  = 3
	// finishTimeout bounds the complete or release that follows an effect.
	finishTimeout = 5 * time.Second
)

// Config configures a Guard. The zero value of every field but Namespace
// means the documented default.
type Config struct {
	// Namespace prefixes every key ("<namespace>#<key>") so that several
	// consumers, or business data, can share a table. Required; it must not
	// contain '#', so prefixes never overlap.
	Namespace string
	// Window is the business window: how long a completed fact suppresses
	// duplicates. Default: DefaultWindow (24h).
	Window time.Duration
	// TTLAfterWindow is added to the end of the window to get the record's
	// TTL attribute, used only for DynamoDB clean-up. Default: 24h.
	TTLAfterWindow time.Duration
	// LeaseMax caps the lease of a reservation. The lease ends at the
	// context's deadline (the Lambda deadline) or after LeaseMax, whichever
	// is sooner. Default: DefaultLeaseMax (15m, Lambda's longest timeout).
	LeaseMax time.Duration
	// PayloadIgnore lists JSON fields, as dotted paths ("sentAt",
	// "meta.traceId"), left out of the payload hash: fields that change
	// between deliveries of one fact. Default: none.
	PayloadIgnore []string
	// CacheSize is how many completed keys are kept in memory so that
	// repeats skip the store. Default: 0, no cache.
	CacheSize int
	// ExpiryRetries bounds how often a reservation is retried when the record
	// that blocked it had expired by the time it was read. Default: 3.
	ExpiryRetries int
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// KeySecret, when set, makes the guard store and log a keyed hash of
	// each business key instead of the key: the record's key is
	// "<namespace>#" followed by the base64url HMAC-SHA-256, under
	// KeySecret, of "<namespace>#<key>". Use it when business keys are
	// personal data (an e-mail address, an account number): the table and
	// the adapter's logs then hold no key in plain text, and without the
	// secret nobody can recover one by hashing likely values.
	//
	// What it costs: a key cannot be read back from the table or the logs;
	// to find a fact's record, compute its hash with the secret (Guard.Key).
	// What stays the same: one business key always gives one record key,
	// so duplicates are found across deliveries, and Reservation.Key (the
	// hashed key) is stable across deliveries, to pass downstream as an
	// idempotency key as before.
	//
	// It must be at least MinKeySecretBytes random bytes, and must not
	// change while records live: a new secret, or turning hashing on or off,
	// gives every fact a new record key and a new Reservation.Key, so a
	// duplicate of a fact processed before the change runs again (downstream
	// too). Change it only when no fact of the last business window can be
	// delivered again. Default: none, keys are stored and logged as they are.
	KeySecret []byte
}

// MinKeySecretBytes is the shortest Config.KeySecret: 32 bytes, the size of
// an HMAC-SHA-256 output.
const MinKeySecretBytes = 32

// Guard runs effects at most once per business fact within the business
// window, and exactly once when deliveries are retried until they succeed.
// A Guard is safe for concurrent use.
type Guard struct {
	store  Store
	cfg    Config
	hasher hasher
	cache  *completedCache
}

// NewGuard returns a Guard over store, with cfg's defaults filled in.
func NewGuard(store Store, cfg Config) (*Guard, error) {
	if store == nil {
		return nil, errors.New("idempotency: nil store")
	}
	if cfg.Namespace == "" || strings.ContainsRune(cfg.Namespace, '#') || strings.IndexFunc(cfg.Namespace, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("idempotency: namespace %q must be non-empty, without '#' or control characters", cfg.Namespace)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Window", &cfg.Window, DefaultWindow}, {"TTLAfterWindow", &cfg.TTLAfterWindow, DefaultTTLAfterWindow}, {"LeaseMax", &cfg.LeaseMax, DefaultLeaseMax}} {
		if *d.v < 0 {
			return nil, fmt.Errorf("idempotency: %s is %v; it must not be negative", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Window < time.Second || cfg.LeaseMax < time.Second {
		return nil, fmt.Errorf("idempotency: Window (%v) and LeaseMax (%v) must be at least 1s", cfg.Window, cfg.LeaseMax)
	}
	if n := len(cfg.KeySecret); n > 0 && n < MinKeySecretBytes {
		return nil, fmt.Errorf("idempotency: KeySecret has %d bytes; give at least %d random bytes, or none to keep keys in plain text", n, MinKeySecretBytes)
	}
	if cfg.ExpiryRetries <= 0 {
		cfg.ExpiryRetries = DefaultExpiryRetries
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Guard{store: store, cfg: cfg, hasher: newHasher(cfg.PayloadIgnore), cache: newCompletedCache(cfg.CacheSize)}, nil
}

// Reservation is what an effect learns of the reservation it runs under.
type Reservation struct {
	// Key is the namespaced key of the fact. It is the same for every
	// delivery of the fact: pass it downstream as the idempotency key of an
	// external call (a payment API), so that the call is safe even if the
	// effect runs again after a crash between the call and completion.
	Key string
	// Token is the random owner token of this reservation.
	Token string
	// LeaseUntil is when the reservation may be taken over; the effect's
	// context is cancelled then.
	LeaseUntil time.Time
}

// Effect is the work done once per fact. It returns a small result stored
// for duplicates (at most MaxResultBytes).
type Effect func(ctx context.Context, r Reservation) (result string, err error)

// TxEffect computes a transactional effect: the writes the store commits
// together with the COMPLETED record, and the result stored for duplicates.
// It must not have effects of its own; it may run before the key is known to
// be new, and its writes are discarded if the fact turns out to be a
// duplicate.
type TxEffect func(ctx context.Context, r Reservation) (writes any, result string, err error)

// Outcome says how a call to Do ended without error.
type Outcome int

const (
	// Processed means the effect ran and the record is COMPLETED.
	Processed Outcome = iota + 1
	// Duplicate means the fact was already completed; the effect did not run.
	Duplicate
)

func (o Outcome) String() string {
	switch o {
	case Processed:
		return "processed"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is the outcome of a call and the effect's stored result.
type Result struct {
	Outcome Outcome
	// Value is the effect's result, from this run or from the record.
	Value string
	// FromCache reports a duplicate answered from memory, without the store.
	FromCache bool
}

// Key returns the record key for a business key: the namespaced key
// "<namespace>#<key>", or its keyed hash with Config.KeySecret. Errors wrap
// ErrInvalidKey; they quote the key only when keys are not hashed. The rules
// are the same either way, so that hashing changes no verdict.
func (g *Guard) Key(key string) (string, error) {
	switch {
	case key == "":
		return "", fmt.Errorf("%w: empty", ErrInvalidKey)
	case !utf8.ValidString(key):
		return "", fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	case strings.IndexFunc(key, unicode.IsControl) >= 0 && len(g.cfg.KeySecret) > 0:
		return "", fmt.Errorf("%w: it holds control characters", ErrInvalidKey)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return "", fmt.Errorf("%w: %q holds control characters", ErrInvalidKey, key)
	}
	pk := g.cfg.Namespace + "#" + key
	if len(pk) > MaxKeyBytes {
		return "", fmt.Errorf("%w: %d bytes with the namespace, more than %d", ErrInvalidKey, len(pk), MaxKeyBytes)
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
	// Hash is the payload's hash in the current version (see Guard.Fact).
	Hash string
	// payload is kept to compare with a record that carries a hash of an
	// earlier version; empty in a Fact not made by Guard.Fact.
	payload string
}

// Fact validates key and payload (JSON) and returns their Fact. Errors wrap
// ErrInvalidKey or ErrInvalidPayload: bad input, not worth a retry.
//
// The payload hash is versioned ("v2:…"): SHA-256 of a canonical form in
// which numbers are exact values (5000, 5000.0 and 5e3 are one number) and
// objects have sorted members. A payload holding a lone UTF-16 surrogate
// escape, or an object with a member twice, is invalid: either would make
// two different facts look alike, or one fact look different to two
// decoders. A record written with the hash of version 1 (the releases
// before versions) is recognised as the same payload while it lives.
func (g *Guard) Fact(key string, payload []byte) (Fact, error) {
	pk, err := g.Key(key)
	if err != nil {
		return Fact{}, err
	}
	hash, err := g.hasher.Hash(payload)
	if err != nil {
		return Fact{}, fmt.Errorf("%s: %w", pk, err)
	}
	return Fact{Key: pk, Hash: hash, payload: string(payload)}, nil
}

// samePayload reports whether stored, the payload hash of a record or of a
// cached completion, is f's payload, in the current hash version or an
// earlier one that records may still carry.
func (g *Guard) samePayload(f Fact, stored string) bool {
	return g.hasher.matches(stored, f.Hash, []byte(f.payload))
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
// ErrInProgress, ErrPayloadMismatch, ErrLeaseLost or ErrResultTooLarge, are
// an *EffectError (the reservation was released), or are the store's.
func (g *Guard) Run(ctx context.Context, f Fact, effect Effect) (Result, error) {
	var res Result
	err := g.run(ctx, f, func(ctx context.Context, rec *Record) (bool, error) {
		if err := g.store.Reserve(ctx, *rec, g.cfg.Now()); err != nil {
			return false, storeError("reserve", err)
		}
		value, err := g.runEffect(ctx, rec, effect)
		res = Result{Outcome: Processed, Value: value}
		return true, err
	}, &res)
	return res, err
}

// RunTx is Run for a transactional effect: the effect's writes and the
// COMPLETED record are committed in one atomic request (one round trip, no
// IN_PROGRESS state), so the effect happens exactly once with no window
// between the effect and its record. The store must be a TxStore. A write
// refused by its own condition returns an *EffectError wrapping ErrTxRejected.
func (g *Guard) RunTx(ctx context.Context, f Fact, effect TxEffect) (Result, error) {
	txs, ok := g.store.(TxStore)
	if !ok {
		return Result{}, ErrNoTransactions
	}
	var res Result
	var writes any
	computed := false
	err := g.run(ctx, f, func(ctx context.Context, rec *Record) (bool, error) {
		if !computed {
			var value string
			var err error
			writes, value, err = effect(ctx, g.reservation(rec))
			if err != nil {
				return false, &EffectError{Err: err}
			}
			if len(value) > MaxResultBytes {
				return false, &EffectError{Err: fmt.Errorf("%w: %d bytes", ErrResultTooLarge, len(value))}
			}
			res.Value, computed = value, true
		}
		rec.Status, rec.LeaseUntil, rec.Result = StatusCompleted, time.Time{}, res.Value
		err := txs.Commit(ctx, *rec, g.cfg.Now(), writes)
		if errors.Is(err, ErrTxRejected) {
			return false, &EffectError{Err: err}
		}
		if err != nil {
			return false, storeError("commit", err)
		}
		res.Outcome = Processed
		g.remember(rec)
		return true, nil
	}, &res)
	return res, err
}

// attempt tries to take the key with a new record; it reports whether it
// did, and returns a *ConditionFailedError when a record blocked it.
type attempt func(ctx context.Context, rec *Record) (took bool, err error)

// run answers from the cache if it can, and otherwise makes attempts until
// one takes the key or the record that blocked it decides.
func (g *Guard) run(ctx context.Context, f Fact, try attempt, res *Result) error {
	pk, hash := f.Key, f.Hash
	if e, ok := g.cache.get(pk, g.cfg.Now()); ok {
		if !g.samePayload(f, e.hash) {
			return fmt.Errorf("%s: %w", pk, ErrPayloadMismatch)
		}
		*res = Result{Outcome: Duplicate, Value: e.result, FromCache: true}
		return nil
	}
	token := newToken()
	for range g.cfg.ExpiryRetries + 1 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: not started: %w", pk, err)
		}
		rec := g.newRecord(ctx, pk, token, hash)
		took, err := try(ctx, &rec)
		if err == nil {
			return nil
		}
		if took {
			return fmt.Errorf("%s: %w", pk, err)
		}
		var cf *ConditionFailedError
		if !errors.As(err, &cf) {
			return fmt.Errorf("%s: %w", pk, err)
		}
		old := cf.Old
		if old == nil {
			if old, err = g.store.Get(ctx, pk); err != nil {
				return fmt.Errorf("%s: %w", pk, storeError("read after a failed condition", err))
			}
			if old == nil {
				continue // released or deleted since: try again
			}
		}
		if old.PayloadHash != hash && g.samePayload(f, old.PayloadHash) {
			// A record of an earlier hash version for this very payload
			// (written before an upgrade): go on under its hash, so that
			// the record keeps one version and the store's conditions,
			// which compare hashes as strings, let this delivery take over
			// a lapsed reservation as they would a redelivery then.
			hash = old.PayloadHash
		}
		if !old.Holds(hash, g.cfg.Now()) {
			continue // expired by the time it was read: try again
		}
		switch {
		case old.PayloadHash != hash:
			return fmt.Errorf("%s: %w (stored %s, got %s)", pk, ErrPayloadMismatch, old.PayloadHash, hash)
		case old.Status == StatusCompleted:
			g.remember(old)
			*res = Result{Outcome: Duplicate, Value: old.Result}
			return nil
		default:
			return fmt.Errorf("%s: %w until %s", pk, ErrInProgress, old.LeaseUntil.UTC().Format(time.RFC3339Nano))
		}
	}
	return fmt.Errorf("%s: %w: the record kept expiring while being read (%d attempts)", pk, ErrInProgress, g.cfg.ExpiryRetries+1)
}

// newRecord returns the IN_PROGRESS record of a new reservation. Its lease
// ends at the context's deadline, capped by LeaseMax.
func (g *Guard) newRecord(ctx context.Context, pk, token, hash string) Record {
	now := g.cfg.Now()
	lease := now.Add(g.cfg.LeaseMax)
	if d, ok := ctx.Deadline(); ok && d.Before(lease) {
		lease = d
	}
	expires := now.Add(g.cfg.Window).Truncate(time.Second)
	return Record{
		Key:         pk,
		Status:      StatusInProgress,
		Owner:       token,
		LeaseUntil:  lease.Truncate(time.Millisecond),
		ExpiresAt:   expires,
		TTL:         expires.Add(g.cfg.TTLAfterWindow),
		PayloadHash: hash,
	}
}

func (g *Guard) reservation(rec *Record) Reservation {
	return Reservation{Key: rec.Key, Token: rec.Owner, LeaseUntil: rec.LeaseUntil}
}

// runEffect runs effect under the reservation rec, then completes or
// releases the record.
func (g *Guard) runEffect(ctx context.Context, rec *Record, effect Effect) (string, error) {
	ectx, cancel := context.WithDeadline(ctx, rec.LeaseUntil)
	value, err := callEffect(ectx, g.reservation(rec), effect)
	cancel()
	if err != nil {
		rctx, cancel := detached(ctx)
		defer cancel()
		if rerr := g.store.Release(rctx, rec.Key, rec.Owner); rerr != nil {
			return "", &EffectError{Err: errors.Join(err, fmt.Errorf("release: %w", rerr))}
		}
		return "", &EffectError{Err: err}
	}
	var tooLarge error
	if len(value) > MaxResultBytes {
		tooLarge = fmt.Errorf("%w: %d bytes; the record is completed without it", ErrResultTooLarge, len(value))
		value = ""
	}
	rec.Status, rec.Result = StatusCompleted, value
	cctx, cancel := detached(ctx)
	defer cancel()
	if err := g.store.Complete(cctx, *rec); err != nil {
		return value, storeError("complete", err)
	}
	g.remember(rec)
	return value, tooLarge
}

// storeError wraps a failure of the store in a *StoreError; the store's
// answers about the record (a failed condition, a lost lease) pass as they
// are.
func storeError(op string, err error) error {
	if errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrTxRejected) {
		return err
	}
	return &StoreError{Op: op, Err: err}
}

// detached returns a context for the write that ends a reservation: it
// survives the cancellation of ctx (an effect that used its whole lease must
// still complete or release), bounded by its own timeout.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
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

func (g *Guard) remember(rec *Record) {
	g.cache.put(cacheEntry{key: rec.Key, hash: rec.PayloadHash, result: rec.Result, expiresAt: rec.ExpiresAt})
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
