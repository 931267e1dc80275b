package sqsbatch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

// TestHashedKeysAreNotStoredOrLogged: with a key secret, neither the table nor the log holds the business
// key, only its HMAC-SHA-256; the key the effect passes downstream is that
// same stored key, and it is stable across deliveries.
func TestHashedKeysAreNotStoredOrLogged(t *testing.T) {
	const email = "jane.doe@example.com" // a business key that is personal data
	cfg := idempotency.Config{Namespace: "charge", KeySecret: []byte(strings.Repeat("s3cr3t-", 6))}
	var err error
	f := newFixture(t)
	if f.Guard, err = idempotency.NewGuard(f.Store, cfg); err != nil {
		t.Fatal(err)
	}
	var downstream []string
	h := sqsbatch.New(f.Guard, orderKey, func(ctx context.Context, o order, r idempotency.Reservation) (string, error) {
		if o.OrderID == email {
			downstream = append(downstream, r.Key)
		}
		if o.Mode == "fail" {
			return "", context.DeadlineExceeded
		}
		return "ok", nil
	}, f.Config(contract.Raw))
	first := handle(t, f, h, message(`{"orderId":"`+email+`","amount":1,"mode":"fail"}`, contract.Raw))
	second := handle(t, f, h, message(`{"orderId":"`+email+`","amount":1,"mode":"fail"}`, contract.Raw))
	if first["outcome"] != "failed" || second["outcome"] != "failed" {
		t.Fatalf("outcomes %v, %v: want two failed deliveries", first["outcome"], second["outcome"])
	}
	f.Mu.Lock()
	logs := f.Logs.String()
	f.Mu.Unlock()
	if strings.Contains(logs, email) {
		t.Errorf("the log holds the business key:\n%s", logs)
	}
	if len(downstream) != 2 || downstream[0] != downstream[1] || strings.Contains(downstream[0], email) || !strings.HasPrefix(downstream[0], "charge#") {
		t.Fatalf("keys passed downstream %q: want one stable key per fact, without the business key", downstream)
	}
	if first["key"] != downstream[0] {
		t.Errorf("logged key %v, passed downstream %s: want the same", first["key"], downstream[0])
	}
	rec := message(`{"orderId":"`+email+`","amount":1}`, contract.Raw)
	if line := handle(t, f, h, rec); line["outcome"] != "processed" {
		t.Fatalf("%v", line)
	}
	if stored, _ := f.Store.Get(context.Background(), downstream[0]); stored == nil || stored.Status != idempotency.StatusCompleted {
		t.Fatalf("no completed record under the hashed key %s", downstream[0])
	}
	if stored, _ := f.Store.Get(context.Background(), "charge#"+email); stored != nil {
		t.Fatalf("a record is stored under the business key: %+v", stored)
	}
	cfg.KeySecret = []byte("short")
	if _, err = idempotency.NewGuard(f.Store, cfg); err == nil || !strings.Contains(err.Error(), "32") {
		t.Errorf("a 5-byte secret: %v, want it refused (at least 32 bytes)", err)
	}
}
