package sqsbatch_test

import (
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// TestKeyedMismatchLogsNoCheckableHash: with a key secret, the log line of a
// payload mismatch names the two payloads by their keyed hashes only: none
// of the hashes anyone can compute without the secret (SHA-256 of either
// payload, as written or canonical) is in the logs.
func TestKeyedMismatchLogsNoCheckableHash(t *testing.T) {
	f := newFixture(t)
	var err error
	if f.Guard, err = idempotency.NewGuard(f.Store, idempotency.Config{Namespace: "charge", KeySecret: []byte(strings.Repeat("k", 32))}); err != nil {
		t.Fatal(err)
	}
	h := f.Handler(contract.Raw)
	first, reused := `{"orderId":"jane.doe@example.com","amount":1}`, `{"orderId":"jane.doe@example.com","amount":2}`
	if line := handle(t, f, h, message(first, contract.Raw)); line["outcome"] != "processed" {
		t.Fatalf("%v", line)
	}
	line := handle(t, f, h, message(reused, contract.Raw))
	if line["outcome"] != "mismatch" {
		t.Fatalf("%v, want a mismatch", line)
	}
	f.Mu.Lock()
	logs := f.Logs.String()
	f.Mu.Unlock()
	for _, p := range []string{first, reused} {
		for _, h := range storetest.CheckableHashes([]byte(p)) {
			if strings.Contains(logs, h) {
				t.Errorf("the logs hold %s, a hash of %s that anyone can compute:\n%s", h, p, logs)
			}
		}
	}
	if !strings.Contains(line["reason"].(string), "k2:") {
		t.Errorf("reason %q: want the keyed hashes (k2:…), so that an operator with the secret can tell the payloads", line["reason"])
	}
}
