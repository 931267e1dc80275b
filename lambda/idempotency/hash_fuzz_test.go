package idempotency_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// FuzzPayloadHash checks the canonical parser against encoding/json on any
// input: it accepts only valid JSON; it refuses valid JSON only for the
// reasons it documents (a lone surrogate escape, a duplicate member, too
// deep a nesting); and what it accepts hashes like its re-encoding by
// encoding/json (members sorted, whitespace gone, numbers as written), so
// that neither whitespace nor member order makes two facts of one.
func FuzzPayloadHash(f *testing.F) {
	for _, s := range []string{
		`{"orderId":"o-1","amount":5000,"items":[{"sku":"a","qty":1}],"paid":true,"note":null}`,
		`{"b":1,"a":2}`, `{"a":"\ud83d\ude00","b":"\u00e9"}`, `{"a":"\ud800"}`, `{"a":1,"a":2}`,
		`[1e400,-0.0,12345678901234567890]`, `"x"`, `{`, `{"a":1}{}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	g, err := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "ns"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		fact, err := g.Fact("k", payload)
		valid := json.Valid(payload)
		if err == nil && !valid {
			t.Fatalf("Fact accepted %q, which is not JSON", payload)
		}
		if err != nil {
			documented := false
			for _, why := range []string{"surrogate", "duplicate member", "nested", "UTF-8"} {
				documented = documented || strings.Contains(err.Error(), why)
			}
			if valid && !documented {
				t.Fatalf("Fact refused valid JSON %q: %v", payload, err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("encoding/json cannot decode %q, which Fact accepted: %v", payload, err)
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		other, err := g.Fact("k", again)
		if err != nil || other.Hash != fact.Hash {
			t.Fatalf("%q and its re-encoding %q hash differently (%v)", payload, again, err)
		}
	})
}
