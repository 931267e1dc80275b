package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/fakeclock"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

func TestNewGuardValidates(t *testing.T) {
	s := storetest.NewMemoryStore()
	for _, cfg := range []idempotency.Config{
		{},
		{Namespace: "a#b"},
		{Namespace: "a\nb"},
		{Namespace: "ok", Window: -time.Hour},
		{Namespace: "ok", LeaseMax: time.Millisecond},
		{Namespace: "ok", Window: 5 * time.Minute, LeaseMax: 15 * time.Minute},
		{Namespace: "ok", LeaseMax: 2 * time.Second, FinishBudget: 2 * time.Second},
		{Namespace: "ok", CacheSize: 50_000_000},
		{Namespace: "ok", CacheSize: -1},
	} {
		if _, err := idempotency.NewGuard(s, cfg); err == nil {
			t.Errorf("NewGuard(%+v) accepted a bad config", cfg)
		}
	}
	if _, err := idempotency.NewGuard(nil, idempotency.Config{Namespace: "ok"}); err == nil {
		t.Error("NewGuard accepted a nil store")
	}
}

func TestKeyValidation(t *testing.T) {
	g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns"})
	long := make([]byte, limits.MaxKeyBytes-len("ns#")+1)
	for i := range long {
		long[i] = 'k'
	}
	for _, key := range []string{"", "a\x00b", "tab\there", "\xff\xfe", string(long)} {
		if _, err := g.Key(key); !errors.Is(err, idempotency.ErrInvalidKey) {
			t.Errorf("Key(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	for _, key := range []string{"order-42", "a#b", "ключ", string(long[1:])} {
		if pk, err := g.Key(key); err != nil || pk != "ns#"+key {
			t.Errorf("Key(%q) = %q, %v", key, pk, err)
		}
	}
}

func TestPayloadHash(t *testing.T) {
	g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns", PayloadIgnore: []string{"sentAt", "meta.trace"}})
	hash := func(p string) string {
		f, err := g.Fact("k", []byte(p))
		if err != nil {
			return "error: " + err.Error()
		}
		return f.Hash
	}
	base := hash(`{"id":"1","amount":5,"meta":{"trace":"a","src":"web"}}`)
	same := []string{
		`{"amount":5,"id":"1","meta":{"src":"web","trace":"b"}}`,
		`{ "id" : "1", "amount" : 5, "sentAt": "2026-11-29T12:00:00Z", "meta": {"src":"web"} }`,
	}
	for _, p := range same {
		if hash(p) != base {
			t.Errorf("hash(%s) differs from the canonical payload's", p)
		}
	}
	for _, p := range []string{`{"id":"1","amount":6,"meta":{"src":"web"}}`, `{"id":"1","amount":5,"meta":{"src":"app"}}`, `{"id":"1","amount":"5","meta":{"src":"web"}}`} {
		if hash(p) == base {
			t.Errorf("hash(%s) equals another payload's", p)
		}
	}
	deep := ""
	for range 100 {
		deep += "["
	}
	for _, bad := range []string{`{`, `{} {}`, deep} {
		if h := hash(bad); len(h) < 6 || h[:6] != "error:" {
			t.Errorf("hash(%.20s…) = %s, want an error", bad, h)
		}
	}
}

func TestCacheSkipsTheStore(t *testing.T) {
	s := storetest.NewMemoryStore()
	now := time.Now()
	clock := func() time.Time { return now }
	g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns", CacheSize: 2, Window: time.Hour, Now: clock})
	ctx := context.Background()
	for i := range 3 {
		if _, err := g.Do(ctx, strconv.Itoa(i), []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) { return "r", nil }); err != nil {
			t.Fatal(err)
		}
	}
	// "0" was evicted (size 2); "2" is cached even once the store forgets it.
	if err := s.Release(ctx, "ns#2", "nobody"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatal(err)
	}
	res, err := g.Do(ctx, "2", []byte(`{}`), nil)
	if err != nil || !res.FromCache || res.Value != "r" {
		t.Fatalf("cached duplicate: %+v, %v", res, err)
	}
	if _, err := g.Do(ctx, "2", []byte(`{"x":1}`), nil); !errors.Is(err, idempotency.ErrPayloadMismatch) {
		t.Fatalf("cached mismatch: %v", err)
	}
	if res, _ := g.Do(ctx, "0", []byte(`{}`), nil); res.FromCache {
		t.Fatal("an evicted key was answered from the cache")
	}
	now = now.Add(2 * time.Hour) // past the window: the cache no longer answers
	res, err = g.Do(ctx, "2", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) { return "again", nil })
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("after the window: %+v, %v", res, err)
	}
}

// TestForgetReachesWarmEnvironments: two warm execution environments that
// both remember a fact in their caches answer it from memory right after an
// operator deletes its record (idemctl forget), and no later than
// limits.CacheLifetime after they learned it, ask the store: the fact's next
// delivery then runs its effect once, and the other environment gets that
// new record's answer.
func TestForgetReachesWarmEnvironments(t *testing.T) {
	s := storetest.NewMemoryStore()
	clock := fakeclock.New()
	env := func() *idempotency.Guard {
		g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns", CacheSize: 10, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := env(), env()
	ctx := context.Background()
	runs := 0
	charge := func(context.Context, idempotency.Reservation) (string, error) {
		runs++
		return "receipt-" + strconv.Itoa(runs), nil
	}
	for _, g := range []*idempotency.Guard{a, b, a, b} { // both learn the fact, then answer it from memory
		if _, err := g.Do(ctx, "o-1", []byte(`{}`), charge); err != nil {
			t.Fatal(err)
		}
	}
	s.Delete("ns#o-1") // idemctl forget
	clock.Advance(limits.CacheLifetime - time.Second)
	for name, g := range map[string]*idempotency.Guard{"a": a, "b": b} {
		if res, err := g.Do(ctx, "o-1", []byte(`{}`), charge); err != nil || !res.FromCache {
			t.Fatalf("%s within the bound: %+v, %v; want the cached duplicate", name, res, err)
		}
	}
	clock.Advance(2 * time.Second) // the cache's times are whole seconds, as the record's window
	res, err := b.Do(ctx, "o-1", []byte(`{}`), charge)
	if err != nil || res.Outcome != outcome.Processed || res.Value != "receipt-2" {
		t.Fatalf("b past the bound: %+v, %v; want the effect run again", res, err)
	}
	res, err = a.Do(ctx, "o-1", []byte(`{}`), charge)
	if err != nil || res.Outcome != outcome.Duplicate || res.FromCache || res.Value != "receipt-2" {
		t.Fatalf("a past the bound: %+v, %v; want the new record's answer from the store", res, err)
	}
	if runs != 2 {
		t.Fatalf("runs %d, want 2", runs)
	}
}

func TestTransactionsNeedATxStore(t *testing.T) {
	type plain struct{ idempotency.Store }
	g, _ := idempotency.NewGuard(plain{storetest.NewMemoryStore()}, idempotency.Config{Namespace: "ns"})
	f, _ := g.Fact("k", []byte(`{}`))
	if _, err := g.RunTx(context.Background(), f, nil); !errors.Is(err, idempotency.ErrNoTransactions) {
		t.Fatalf("RunTx on a plain store: %v", err)
	}
}

// BenchmarkGuard measures the guard's own CPU and allocations per record on
// the in-memory store: a new fact (reserve, effect, complete) and a duplicate
// (one failed reserve), with and without the completed-key cache.
func BenchmarkGuard(b *testing.B) {
	payload := []byte(`{"orderId":"o-123456","customerId":"c-42","amount":5000,"currency":"EUR","email":"a@example.com","placedAt":"2026-11-29T12:00:00Z"}`)
	effect := func(context.Context, idempotency.Reservation) (string, error) { return "ch_123", nil }
	ctx := context.Background()
	b.Run("new", func(b *testing.B) {
		g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge"})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := g.Do(ctx, fmt.Sprint("o-", i), payload, effect); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, cache := range []int{0, 1024} {
		b.Run(fmt.Sprintf("duplicate/cache=%d", cache), func(b *testing.B) {
			g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "charge", CacheSize: cache})
			if _, err := g.Do(ctx, "o-1", payload, effect); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := g.Do(ctx, "o-1", payload, effect); err != nil || res.Outcome != outcome.Duplicate {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// throttled is a store whose every call fails, like a throttled table.
type throttled struct{ idempotency.Store }

var errThrottled = errors.New("ThrottlingException")

func (throttled) Reserve(context.Context, idempotency.Record, time.Time) error { return errThrottled }

func TestStoreFailuresAreErrStore(t *testing.T) {
	g, _ := idempotency.NewGuard(throttled{storetest.NewMemoryStore()}, idempotency.Config{Namespace: "ns"})
	_, err := g.Do(context.Background(), "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) {
		t.Error("the effect ran without a reservation")
		return "", nil
	})
	if !errors.Is(err, idempotency.ErrStore) || errors.Is(err, idempotency.ErrEffect) || !strings.Contains(err.Error(), "store reserve: ") || !errors.Is(err, errThrottled) {
		t.Fatalf("err %v: want an ErrStore of reserve wrapping the store's error", err)
	}
}

// TestEffectLeavesTheFinishingBudget: the effect's context ends the finishing
// budget before the lease, which is the invocation's deadline, so that an
// effect that runs until its context ends still leaves time to complete
// before Lambda freezes the invocation.
func TestEffectLeavesTheFinishingBudget(t *testing.T) {
	s := storetest.NewMemoryStore()
	g, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	res, err := g.Do(ctx, "k", []byte(`{}`), func(ectx context.Context, r idempotency.Reservation) (string, error) {
		if !r.LeaseUntil.Equal(deadline.Truncate(time.Millisecond)) {
			t.Errorf("lease until %v, want the invocation's deadline %v", r.LeaseUntil, deadline)
		}
		d, _ := ectx.Deadline()
		if left := deadline.Sub(d); left < limits.DefaultFinishBudget {
			t.Errorf("the effect's context ends %v before the invocation's deadline, want at least the finishing budget %v", left, limits.DefaultFinishBudget)
		}
		return "r", nil
	})
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestNoReservationWithinTheFinishingBudget: with no more time left than the
// finishing budget, the guard writes nothing and says the record was not
// started.
func TestNoReservationWithinTheFinishingBudget(t *testing.T) {
	s := storetest.NewMemoryStore()
	g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns"})
	ctx, cancel := context.WithTimeout(context.Background(), limits.DefaultFinishBudget-100*time.Millisecond)
	defer cancel()
	_, err := g.Do(ctx, "k", []byte(`{}`), func(context.Context, idempotency.Reservation) (string, error) {
		t.Error("the effect ran with less time left than the finishing budget")
		return "", nil
	})
	if !errors.Is(err, idempotency.ErrNotStarted) {
		t.Fatalf("err %v, want ErrNotStarted", err)
	}
	if rec, _ := s.Get(context.Background(), "ns#k"); rec != nil {
		t.Fatalf("record %+v written although nothing started", rec)
	}
}

// TestRunTxPanicIsErrEffect: a transactional effect that panics fails its
// fact like any effect's panic, and commits nothing.
func TestRunTxPanicIsErrEffect(t *testing.T) {
	s := storetest.NewMemoryStore()
	g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns"})
	f, _ := g.Fact("k", []byte(`{}`))
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("RunTx let the effect's panic escape: %v", p)
			}
		}()
		_, err = g.RunTx(context.Background(), f, func(context.Context, idempotency.Reservation) (any, string, error) { panic("bug in the effect") })
	}()
	if !errors.Is(err, idempotency.ErrEffect) || !errors.Is(err, idempotency.ErrEffectPanicked) {
		t.Fatalf("err %v, want an ErrEffect wrapping ErrEffectPanicked", err)
	}
	if rec, _ := s.Get(context.Background(), "ns#k"); rec != nil {
		t.Fatalf("record %+v committed by a panicking effect", rec)
	}
}

// TestTxResultTooLargeIsProcessed: a transactional effect whose result is
// over the limit commits without it, like Run.
func TestTxResultTooLargeIsProcessed(t *testing.T) {
	s := storetest.NewMemoryStore()
	g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns"})
	f, _ := g.Fact("k", []byte(`{}`))
	big := strings.Repeat("x", limits.DefaultMaxResultBytes+1)
	credited := 0
	res, err := g.RunTx(context.Background(), f, func(context.Context, idempotency.Reservation) (any, string, error) {
		return storetest.MemoryWrites(func() error { credited++; return nil }), big, nil
	})
	if err != nil || res.Outcome != outcome.Processed || res.DroppedBytes != len(big) || credited != 1 {
		t.Fatalf("%+v, %v, credited %d times; want processed once with the result dropped", res, err, credited)
	}
}

// TestWithLargestResults: the derived guard stores results up to
// limits.LargestResultBytes in the same store, and finds the facts of the
// guard it came from; that guard keeps its own bound.
func TestWithLargestResults(t *testing.T) {
	g, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns"})
	large := g.WithLargestResults()
	if large.MaxResultBytes() != limits.LargestResultBytes || g.MaxResultBytes() != limits.DefaultMaxResultBytes {
		t.Fatalf("bounds %d and %d", large.MaxResultBytes(), g.MaxResultBytes())
	}
	result := func(n int) idempotency.Effect {
		return func(context.Context, idempotency.Reservation) (string, error) { return strings.Repeat("r", n), nil }
	}
	ctx := context.Background()
	if res, err := large.Do(ctx, "a", []byte(`{}`), result(limits.LargestResultBytes)); err != nil || res.DroppedBytes != 0 {
		t.Fatalf("the derived guard: %+v, %v", res, err)
	}
	if res, err := g.Do(ctx, "a", []byte(`{}`), result(1)); err != nil || res.Outcome != outcome.Duplicate || len(res.Value) != limits.LargestResultBytes {
		t.Fatalf("the first guard on the derived one's fact: %v, %d bytes, %v", res.Outcome, len(res.Value), err)
	}
	if res, err := g.Do(ctx, "b", []byte(`{}`), result(limits.DefaultMaxResultBytes+1)); err != nil || res.DroppedBytes == 0 {
		t.Fatalf("the first guard: %+v, %v; want its own bound", res, err)
	}
}

// TestKeySecretHashesKeys: with a key secret the record key is the
// namespace and the HMAC-SHA-256 of the namespaced key, stable for one
// secret, different under another; the key rules do not change, and their
// errors do not quote the key.
func TestKeySecretHashesKeys(t *testing.T) {
	guard := func(secret string) *idempotency.Guard {
		g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns", KeySecret: []byte(secret)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := guard(strings.Repeat("a", 32)), guard(strings.Repeat("b", 32))
	ka, err := a.Key("jane@example.com")
	again, _ := a.Key("jane@example.com")
	kb, _ := b.Key("jane@example.com")
	other, _ := a.Key("john@example.com")
	if err != nil || ka != again || ka == kb || ka == other || !strings.HasPrefix(ka, "ns#") || len(ka) != len("ns#")+43 || strings.Contains(ka, "jane") {
		t.Fatalf("keys %q, %q, %q, %q, %v: want ns# and 43 characters, stable for one secret, apart for another secret or key", ka, again, kb, other, err)
	}
	for _, key := range []string{"", "jane\n@example.com", strings.Repeat("k", limits.MaxKeyBytes)} {
		_, err := a.Key(key)
		if !errors.Is(err, idempotency.ErrInvalidKey) || (key != "" && strings.Contains(err.Error(), key[:4])) {
			t.Errorf("Key(%.10q…) = %v: want ErrInvalidKey without the key", key, err)
		}
	}
	if _, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns", KeySecret: make([]byte, 31)}); err == nil {
		t.Error("a 31-byte secret was accepted")
	}
}

// TestTxEffectLeavesTheFinishingBudgetAndStartsTheWindowAtCommit: a
// transactional effect's context ends the finishing budget before the
// invocation's deadline, like Run's, and the window of the record it
// commits starts at the commit, after the effect.
func TestTxEffectLeavesTheFinishingBudgetAndStartsTheWindowAtCommit(t *testing.T) {
	s := storetest.NewMemoryStore()
	now := time.Now().Truncate(time.Second)
	clock := func() time.Time { return now }
	g, _ := idempotency.NewGuard(s, idempotency.Config{Namespace: "ns", Window: time.Hour, Now: clock})
	deadline := now.Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	f, _ := g.Fact("k", []byte(`{}`))
	res, err := g.RunTx(ctx, f, func(ectx context.Context, _ idempotency.Reservation) (any, string, error) {
		d, _ := ectx.Deadline()
		if left := deadline.Sub(d); left < limits.DefaultFinishBudget {
			t.Errorf("the transactional effect's context ends %v before the deadline, want at least the finishing budget %v", left, limits.DefaultFinishBudget)
		}
		now = now.Add(30 * time.Second) // a slow effect
		return nil, "ok", nil
	})
	if err != nil || res.Outcome != outcome.Processed {
		t.Fatalf("%+v, %v", res, err)
	}
	rec, _ := s.Get(context.Background(), f.Key)
	if rec == nil || !rec.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("record %+v: want its window to end an hour after the commit, %v", rec, now.Add(time.Hour))
	}
}
