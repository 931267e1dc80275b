package idempotency_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// TestKeySecretHidesThePayloadToo performs the attack on a guard with a key
// secret: the attacker holds the table (every attribute of the record) and
// the logs (the reason of a payload mismatch), but not the secret, and
// knows the shape of the messages. It guesses payloads and checks each guess
// against what it holds with every hash it can compute without the secret:
// SHA-256 of the payload as written and of its canonical form (the payload
// hash of a guard without a secret), in base64url and hex. Not one guess may
// be confirmed, not even the right one.
func TestKeySecretHidesThePayloadToo(t *testing.T) {
	store := storetest.NewMemoryStore()
	secret := []byte(strings.Repeat("s", limits.MinKeySecretBytes))
	g, err := idempotency.NewGuard(store, idempotency.Config{Namespace: "signup", KeySecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	message := func(customer, plan string) []byte {
		return fmt.Appendf(nil, `{"customer":%q,"plan":%q}`, customer, plan)
	}
	ctx := context.Background()
	ok := func(context.Context, idempotency.Reservation) (string, error) { return "welcome-mail-sent", nil }
	if _, err := g.Do(ctx, "jane.doe@example.com", message("jane.doe@example.com", "pro"), ok); err != nil {
		t.Fatal(err)
	}
	// A producer bug reuses the key for other content: the mismatch is
	// logged (its reason is the error's text).
	_, logged := g.Do(ctx, "jane.doe@example.com", message("jane.doe@example.com", "free"), ok)
	if !errors.Is(logged, idempotency.ErrPayloadMismatch) {
		t.Fatalf("other content: %v, want a mismatch", logged)
	}
	pk, _ := g.Key("jane.doe@example.com")
	rec, err := store.Get(ctx, pk)
	if err != nil || rec == nil {
		t.Fatalf("record %+v, %v", rec, err)
	}
	held := strings.Join([]string{rec.Key, rec.Owner, rec.PayloadHash, rec.Result, err2s(logged), mismatch(t, g, ctx, message)}, "\n")

	// What the attacker can compute: the hashes of a guard with no secret.
	plain, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "signup"})
	hashes := func(p []byte) []string {
		f, err := plain.Fact("k", p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(p)
		return []string{f.Hash, strings.TrimPrefix(f.Hash, "v2:"), base64.RawURLEncoding.EncodeToString(sum[:]), hex.EncodeToString(sum[:])}
	}
	var confirmed []string
	guesses := 0
	for _, customer := range []string{"john.doe@example.com", "jane@example.com", "j.doe@example.com", "jane.doe@example.com", "john@example.com"} {
		for _, plan := range []string{"free", "pro", "team"} {
			guesses++
			for _, h := range hashes(message(customer, plan)) {
				if strings.Contains(held, h) {
					confirmed = append(confirmed, fmt.Sprintf("%s (plan %s) by %s", customer, plan, h))
					break
				}
			}
		}
	}
	if len(confirmed) > 0 {
		t.Fatalf("%d guesses without the secret confirmed %q from the stored record and the logs:\n%s", guesses, confirmed, held)
	}
	t.Logf("%d guesses, none confirmed; the attacker held:\n%s", guesses, held)

	// The method is sound: with the secret, the right guess is confirmed,
	// and the keyed hash still finds duplicates across deliveries.
	insider, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "signup", KeySecret: secret})
	f, err := insider.Fact("jane.doe@example.com", message("jane.doe@example.com", "pro"))
	if err != nil || f.Hash != rec.PayloadHash || !strings.HasPrefix(f.Hash, "k2:") {
		t.Fatalf("with the secret: %+v, %v; want the stored hash %s, tagged k2:", f, err, rec.PayloadHash)
	}
	res, err := g.Do(ctx, "jane.doe@example.com", []byte(`{ "plan": "pro", "customer": "jane.doe@example.com" }`), ok)
	if err != nil || res.Outcome != outcome.Duplicate {
		t.Fatalf("a redelivery, reformatted: %+v, %v; want a duplicate", res, err)
	}
	other, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "signup", KeySecret: []byte(strings.Repeat("t", limits.MinKeySecretBytes))})
	if f2, _ := other.Fact("jane.doe@example.com", message("jane.doe@example.com", "pro")); f2.Hash == f.Hash {
		t.Fatal("two secrets give one payload hash")
	}
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// mismatch returns the reason of a mismatch against a reservation in
// progress (the other path that reports one).
func mismatch(t *testing.T, g *idempotency.Guard, ctx context.Context, message func(string, string) []byte) string {
	var reason string
	_, err := g.Do(ctx, "john@example.com", message("john@example.com", "team"), func(ctx context.Context, _ idempotency.Reservation) (string, error) {
		_, err := g.Do(ctx, "john@example.com", message("john@example.com", "free"), nil)
		if !errors.Is(err, idempotency.ErrPayloadMismatch) {
			t.Errorf("in progress, other content: %v, want a mismatch", err)
		}
		reason = err2s(err)
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reason
}
