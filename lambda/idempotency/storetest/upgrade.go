package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// releaseOneHash is the payload hash exactly as the release before hash
// versions wrote it (no PayloadIgnore): base64url SHA-256 of encoding/json's
// re-encoding of the payload decoded with UseNumber. It is a copy kept here
// on purpose, independent of the library's own code, so that the suite pins
// what records already in tables hold.
func releaseOneHash(t *testing.T, payload []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// previousHashVersion: records written by the release before hash versions
// (their payload hash has no version tag) stay readable by the current one
// while they live: a redelivery of the same payload is a duplicate of a
// COMPLETED record, in progress under a live lease, and takes over a lapsed
// reservation (which then completes under its own hash version); other
// content is still a mismatch. New records carry a versioned hash.
func previousHashVersion(t *testing.T, h Harness) {
	s := h.NewStore(t)
	clock := NewClock()
	g := newGuard(t, s, "charge", clock)
	cached, err := idempotency.NewGuard(s, idempotency.Config{Namespace: "charge", Window: time.Hour, LeaseMax: time.Minute, Now: clock.Now, CacheSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The same order as the previous release's producer wrote it, and as a
	// redelivery writes it now (another member order and spacing).
	written := []byte(`{"orderId":"42","amount":5000,"note":"caf\u00e9 <b>"}`)
	redelivered := []byte(`{ "note": "café <b>", "amount": 5000, "orderId": "42" }`)
	old := releaseOneHash(t, written)
	write := func(key string, status idempotency.Status, lease time.Duration) {
		t.Helper()
		now := clock.Now()
		rec := idempotency.Record{Key: "charge#" + key, Status: idempotency.StatusInProgress, Owner: "previous-release", LeaseUntil: now.Add(lease),
			ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: old}
		if err := s.Reserve(ctx, rec, now); err != nil {
			t.Fatal(err)
		}
		if status == idempotency.StatusCompleted {
			rec.Status, rec.Result = idempotency.StatusCompleted, "receipt-from-the-previous-release"
			if err := s.Complete(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("completed", idempotency.StatusCompleted, time.Minute)
	write("running", idempotency.StatusInProgress, time.Hour)
	write("crashed", idempotency.StatusInProgress, 10*time.Second)
	clock.Advance(11 * time.Second)

	for _, g := range []*idempotency.Guard{g, cached, cached} {
		res, err := g.Do(ctx, "completed", redelivered, failIfRun(t))
		if err != nil || res.Outcome != idempotency.Duplicate || res.Value != "receipt-from-the-previous-release" {
			t.Fatalf("COMPLETED by the previous release: %+v, %v; want a duplicate with its result", res, err)
		}
	}
	if _, err := g.Do(ctx, "completed", []byte(`{"orderId":"42","amount":1}`), failIfRun(t)); !errors.Is(err, idempotency.ErrPayloadMismatch) {
		t.Fatalf("other content under a previous release's key: %v, want ErrPayloadMismatch", err)
	}
	if _, err := g.Do(ctx, "running", redelivered, failIfRun(t)); !errors.Is(err, idempotency.ErrInProgress) {
		t.Fatalf("a live reservation of the previous release: %v, want ErrInProgress", err)
	}
	res, err := g.Do(ctx, "crashed", redelivered, okEffect)
	if err != nil || res.Outcome != idempotency.Processed {
		t.Fatalf("a lapsed reservation of the previous release: %+v, %v; want it taken over", res, err)
	}
	if res, err := g.Do(ctx, "crashed", redelivered, failIfRun(t)); err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("after the take-over: %+v, %v; want a duplicate", res, err)
	}
	if res, err := g.Do(ctx, "new", written, okEffect); err != nil || res.Outcome != idempotency.Processed {
		t.Fatalf("a new fact: %+v, %v", res, err)
	}
	rec, err := s.Get(ctx, "charge#new")
	if err != nil || rec == nil || rec.PayloadHash == old || !strings.HasPrefix(rec.PayloadHash, "v2:") {
		t.Fatalf("new record %+v, %v: want a payload hash tagged with its version (v2:)", rec, err)
	}
}
