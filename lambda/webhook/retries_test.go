package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/storespy"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// Each provider's retry, as the provider makes it, runs the handler once and
// gets the replay; a forged delivery gets 401 with no store request and a log
// line that names the failed check and holds neither the secret nor the body.
func TestProviderRetriesThroughTheHandler(t *testing.T) {
	now := time.Unix(1700000000, 0)
	later := func() time.Time { return now.Add(2 * time.Minute) }
	stripe := []byte(stripeBody)
	gh := []byte(`{"action":"opened","number":1347}`)
	sh := []byte(`{"id":820982911946154508}`)
	sw := []byte(`{"type":"invoice.paid"}`)
	sl := []byte(`{"type":"event_callback","event_id":"Ev1"}`)
	const swSecret = "whsec_c3ctc2VjcmV0LTE="
	for _, tc := range []struct {
		name     string
		verifier httpkey.Verifier
		body     []byte
		first    http.Header
		retry    http.Header
		forged   http.Header
		check    string
	}{
		{"stripe: the same event id, a new t", webhook.Stripe{Secrets: [][]byte{[]byte("whsec_a")}, Now: later}, stripe,
			webhooktest.Stripe(stripe, now, "whsec_a"), webhooktest.Stripe(stripe, now.Add(2*time.Minute), "whsec_a"), webhooktest.Stripe(stripe, now.Add(2*time.Minute), "whsec_b"), "signature"},
		{"github: a redelivery with the same delivery id", webhook.GitHub{Secrets: [][]byte{[]byte("gh-secret-1")}}, gh,
			with(webhooktest.GitHub(gh, "gh-secret-1"), "X-GitHub-Delivery", "d-1"), with(webhooktest.GitHub(gh, "gh-secret-1"), "X-GitHub-Delivery", "d-1"),
			with(webhooktest.GitHub(gh, "nope"), "X-GitHub-Delivery", "d-2"), "signature"},
		{"shopify: the same Event-Id, a later Triggered-At", webhook.Shopify{Secrets: [][]byte{[]byte("sh-secret-1")}}, sh,
			with(webhooktest.Shopify(sh, "ev-1", "sh-secret-1"), "X-Shopify-Triggered-At", "2026-12-01T10:00:00Z"),
			with(webhooktest.Shopify(sh, "ev-1", "sh-secret-1"), "X-Shopify-Triggered-At", "2026-12-01T10:30:00Z"),
			hdr("X-Shopify-Event-Id", "ev-1"), "header"},
		{"standard webhooks: the same webhook-id, a new timestamp", webhook.StandardWebhooks{Secrets: [][]byte{[]byte(swSecret)}, Now: later}, sw,
			webhooktest.StandardWebhooks(sw, "msg_1", now, swSecret), webhooktest.StandardWebhooks(sw, "msg_1", now.Add(2*time.Minute), swSecret),
			with(webhooktest.StandardWebhooks(sw, "msg_1", now, swSecret), "webhook-id", "msg_2"), "signature"},
		{"slack: the same event_id, X-Slack-Retry-Num", webhook.Slack{Secrets: [][]byte{[]byte("sl-secret-1")}, Now: later}, sl,
			webhooktest.Slack(sl, now, "sl-secret-1"), with(webhooktest.Slack(sl, now.Add(time.Minute), "sl-secret-1"), "X-Slack-Retry-Num", "1"),
			webhooktest.Slack(sl, now.Add(-10*time.Minute), "sl-secret-1"), "timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storespy.NewCounter(storetest.NewMemoryStore())
			g, _ := idempotency.NewGuard(store, idempotency.Config{Namespace: "hooks"})
			var logs bytes.Buffer
			runs := 0
			h := httpkey.New(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.WriteHeader(204) }),
				httpkey.Config{Verifier: tc.verifier, Logger: outcome.NewLogger(&logs, slog.LevelInfo), Metrics: io.Discard})
			send := func(hdr http.Header) *http.Response {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, request(string(tc.body), hdr))
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
			for _, secret := range []string{"whsec_a", "whsec_b", "gh-secret-1", "sh-secret-1", swSecret, "sl-secret-1"} {
				if strings.Contains(logs.String(), `"`+secret) || strings.Contains(logs.String(), string(tc.body)) {
					t.Fatalf("the log holds %q: %s", secret, logs.String())
				}
			}
		})
	}
}

// TestASignedRequestThatIsNotAnEventIs400: a request whose signature
// verified but that names no event (Stripe: a signed body that is not JSON,
// or has no id; Shopify: no event id header) is 400 with a body that says
// it is not an event, never 401 (the sender is authenticated), with no
// store request and a line of outcome bad_input naming the check. Two
// Shopify event ids that differ stay 401, the package's rule for a header
// repeated with different values (one was added on the way). The providers
// that key on the signed body (GitHub, Slack's slash commands) or on a
// signed header (Standard Webhooks) take a signed body that is not JSON as
// an event, as they send such bodies.
func TestASignedRequestThatIsNotAnEventIs400(t *testing.T) {
	now := time.Unix(1700000000, 0)
	at := func() time.Time { return now }
	form := []byte("payload=%7B%22action%22%3A%22opened%22%7D")
	const swSecret = "whsec_c3ctc2VjcmV0LTE="
	shopify := webhook.Shopify{Secrets: [][]byte{[]byte("sh-secret-1")}}
	for _, tc := range []struct {
		name     string
		verifier httpkey.Verifier
		body     []byte
		h        http.Header
		status   int
	}{
		{"stripe: a signed body that is not JSON", webhook.Stripe{Secrets: [][]byte{[]byte("whsec_a")}, Now: at}, form,
			webhooktest.Stripe(form, now, "whsec_a"), 400},
		{"stripe: a signed JSON body without an id", webhook.Stripe{Secrets: [][]byte{[]byte("whsec_a")}, Now: at}, []byte(`{"object":"event"}`),
			webhooktest.Stripe([]byte(`{"object":"event"}`), now, "whsec_a"), 400},
		{"shopify: a signed body without an event id", shopify, form,
			with(webhooktest.Shopify(form, "ev-1", "sh-secret-1"), "X-Shopify-Event-Id", ""), 400},
		{"shopify: a signed body with two event ids that differ", shopify, form,
			with(webhooktest.Shopify(form, "ev-1", "sh-secret-1"), "Shopify-Event-Id", "ev-2"), 401},
		{"shopify: a signed body that is not JSON, with its event id", shopify, form,
			webhooktest.Shopify(form, "ev-1", "sh-secret-1"), 204},
		{"github: a form-encoded delivery", webhook.GitHub{Secrets: [][]byte{[]byte("gh-secret-1")}}, form,
			webhooktest.GitHub(form, "gh-secret-1"), 204},
		{"slack: a slash command", webhook.Slack{Secrets: [][]byte{[]byte("sl-secret-1")}, Now: at}, form,
			webhooktest.Slack(form, now, "sl-secret-1"), 204},
		{"standard webhooks: a body that is not JSON", webhook.StandardWebhooks{Secrets: [][]byte{[]byte(swSecret)}, Now: at}, form,
			webhooktest.StandardWebhooks(form, "msg_1", now, swSecret), 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storespy.NewCounter(storetest.NewMemoryStore())
			g, _ := idempotency.NewGuard(store, idempotency.Config{Namespace: "hooks"})
			var logs bytes.Buffer
			runs := 0
			h := httpkey.New(g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.WriteHeader(204) }),
				httpkey.Config{Verifier: tc.verifier, Logger: outcome.NewLogger(&logs, slog.LevelInfo), Metrics: io.Discard})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, request(string(tc.body), tc.h))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body.String())
			}
			if tc.status != 400 {
				return
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			reason, _ := line["reason"].(string)
			if runs != 0 || store.Requests() != 0 || line["outcome"] != "bad_input" || !strings.Contains(reason, ": event id: ") || !strings.Contains(w.Body.String(), "not an event") {
				t.Fatalf("runs %d, store requests %d, line %v, body %s", runs, store.Requests(), line, w.Body.String())
			}
		})
	}
}
