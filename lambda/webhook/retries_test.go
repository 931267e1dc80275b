package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

// Each provider's retry, as the provider makes it, runs the handler once and
// gets the replay; a forged delivery gets 401 with no store request and a log
// line that names the failed check and holds neither the secret nor the body.
func TestProviderRetriesThroughTheHandler(t *testing.T) {
	now := time.Unix(1700000000, 0)
	stripeAt := func(ts int64, secret string) []string {
		return []string{"Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", ts, signStripe(secret, ts, stripeBody))}
	}
	ghBody := `{"action":"opened","number":1347}`
	ghSig := func(secret string) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ghBody))
		return fmt.Sprintf("sha256=%x", m.Sum(nil))
	}
	shBody := `{"id":820982911946154508}`
	shSig := func(secret string) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(shBody))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	for _, tc := range []struct {
		name     string
		verifier httpkey.Verifier
		body     string
		first    []string
		retry    []string
		forged   []string
		check    string
	}{
		{"stripe: the same event id, a new t", webhook.Stripe{Secrets: [][]byte{[]byte("whsec_a")}, Now: func() time.Time { return now.Add(2 * time.Minute) }}, stripeBody,
			stripeAt(now.Unix(), "whsec_a"), stripeAt(now.Unix()+120, "whsec_a"), stripeAt(now.Unix()+120, "whsec_b"), "signature"},
		{"github: a redelivery with the same delivery id", webhook.GitHub{Secrets: [][]byte{[]byte("gh-secret-1")}}, ghBody,
			[]string{"X-Hub-Signature-256", ghSig("gh-secret-1"), "X-GitHub-Delivery", "d-1"}, []string{"X-Hub-Signature-256", ghSig("gh-secret-1"), "X-GitHub-Delivery", "d-1"},
			[]string{"X-Hub-Signature-256", ghSig("nope"), "X-GitHub-Delivery", "d-2"}, "signature"},
		{"shopify: the same Event-Id, a later Triggered-At", webhook.Shopify{Secrets: [][]byte{[]byte("sh-secret-1")}}, shBody,
			[]string{"X-Shopify-Hmac-Sha256", shSig("sh-secret-1"), "X-Shopify-Event-Id", "ev-1", "X-Shopify-Triggered-At", "2026-12-01T10:00:00Z"},
			[]string{"X-Shopify-Hmac-Sha256", shSig("sh-secret-1"), "X-Shopify-Event-Id", "ev-1", "X-Shopify-Triggered-At", "2026-12-01T10:30:00Z"},
			[]string{"X-Shopify-Event-Id", "ev-1"}, "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storetest.NewCounter(storetest.NewMemoryStore())
			g, _ := idempotency.NewGuard(store, idempotency.Config{Namespace: "hooks"})
			var logs bytes.Buffer
			runs := 0
			h := httpkey.New(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.WriteHeader(204) }),
				httpkey.Config{Verifier: tc.verifier, Logger: sqsbatch.NewLogger(&logs, slog.LevelInfo), Metrics: io.Discard})
			send := func(hdr []string) *http.Response {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, request(tc.body, hdr...))
				return w.Result()
			}
			if res := send(tc.first); res.StatusCode != 204 {
				t.Fatalf("first: %d", res.StatusCode)
			}
			if res := send(tc.retry); res.StatusCode != 204 || res.Header.Get(httpkey.HeaderReplayed) != "true" {
				t.Fatalf("retry: %d %v", res.StatusCode, res.Header)
			}
			before := store.Requests()
			logs.Reset()
			if res := send(tc.forged); res.StatusCode != 401 {
				t.Fatalf("forged: %d", res.StatusCode)
			}
			if runs != 1 || store.Requests() != before {
				t.Fatalf("runs %d, store requests for the forgery %d", runs, store.Requests()-before)
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			reason, _ := line["reason"].(string)
			if line["outcome"] != "unauthorized" || !strings.Contains(reason, ": "+tc.check+": ") {
				t.Fatalf("log line %v", line)
			}
			for _, secret := range []string{"whsec_a", "whsec_b", "gh-secret-1", "sh-secret-1", tc.body} {
				if strings.Contains(logs.String(), `"`+secret) || strings.Contains(logs.String(), tc.body) {
					t.Fatalf("the log holds %q: %s", secret, logs.String())
				}
			}
		})
	}
}
