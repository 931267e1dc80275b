package webhookdiff

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// shopifyDocumented is Shopify's documented check, written here from
// https://shopify.dev/docs/apps/build/webhooks/verify-deliveries (Shopify
// has no official Go library): the base64 of the HMAC-SHA256 of the raw
// body under the client secret, compared with the header's text in
// constant time, as the documentation's examples compare it. The header is
// read under either spelling, the X- form first, as Shopify's libraries
// (shopify-app-js, shopify-app-php) read it; the key is the event id
// header, read the same way.
func shopifyDocumented(h http.Header, body []byte, secret string) (string, bool) {
	first := func(names ...string) string {
		for _, n := range names {
			if v := h.Get(n); v != "" {
				return v
			}
		}
		return ""
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	got := first("X-Shopify-Hmac-Sha256", "Shopify-Hmac-Sha256")
	return first("X-Shopify-Event-Id", "Shopify-Event-Id"), hmac.Equal([]byte(want), []byte(got))
}

func TestShopifyAgreesWithItsDocumentedAlgorithm(t *testing.T) { agree(t, shopifyMatrix()) }

func shopifyMatrix() matrix {
	const current, old = "shpss_current", "shpss_old"
	const id = "98880550-7158-44d4-b7cd-2c97c8a091b5"
	body := []byte(`{"id":820982911946154508,"email":"jon@example.com","total_price":"10.00"}`)
	good := webhooktest.Shopify(body, id, current)
	sig := good.Get("X-Shopify-Hmac-Sha256")
	newer := http.Header{"Shopify-Hmac-Sha256": {sig}, "Shopify-Event-Id": {id}}
	raw, _ := base64.StdEncoding.DecodeString(sig)
	rows := []row{
		{"signed, X- headers", good, body},
		{"signed, the newer headers without X-", newer, body},
		{"both spellings, agreeing", with(good, "Shopify-Hmac-Sha256", sig), body},
		{"signed by the old secret during a rotation", webhooktest.Shopify(body, id, old), body},
		{"the vector computed apart (Python's hmac)", webhooktest.Shopify([]byte(`{"id":820982911946154508,"email":"jon@example.com"}`), id, "shpss_test_secret"), []byte(`{"id":820982911946154508,"email":"jon@example.com"}`)},
		{"another secret", webhooktest.Shopify(body, id, "shpss_other"), body},
		{"another secret, newer headers", http.Header{"Shopify-Hmac-Sha256": {webhooktest.Shopify(body, id, "x").Get("X-Shopify-Hmac-Sha256")}, "Shopify-Event-Id": {id}}, body},
		{"a tampered body", good, append(body, ' ')},
		{"no HMAC header", with(good, "X-Shopify-Hmac-Sha256", ""), body},
		{"the HMAC in hex", with(good, "X-Shopify-Hmac-Sha256", strings.Repeat("ab", 32)), body},
		{"the HMAC without padding", with(good, "X-Shopify-Hmac-Sha256", strings.TrimRight(sig, "=")), body},
		{"the HMAC URL-safe", with(good, "X-Shopify-Hmac-Sha256", base64.URLEncoding.EncodeToString(raw)+"x"), body},
		{"the HMAC with a trailing space", with(good, "X-Shopify-Hmac-Sha256", sig+" "), body},
		{"the HMAC truncated", with(good, "X-Shopify-Hmac-Sha256", sig[:len(sig)-4]), body},
		{"the HMAC twice, the same value", twice(good, "X-Shopify-Hmac-Sha256", sig), body},
		{"an empty body, signed", webhooktest.Shopify(nil, id, current), nil},
		{"a retry: a later Triggered-At", with(good, "X-Shopify-Triggered-At", "2026-12-01T10:05:00Z"), body},
	}
	return matrix{
		rows:    rows,
		secrets: []string{current, old, "shpss_test_secret"},
		one:     shopifyDocumented,
		clocked: false,
		build:   func(s [][]byte, _ func() time.Time) httpkey.Verifier { return webhook.Shopify{Secrets: s} },
	}
}
