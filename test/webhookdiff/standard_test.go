package webhookdiff

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// standardOfficial is the specification's Go library: NewWebhook(secret)
// and Verify(body, header); the key is the webhook-id it verified.
func standardOfficial(h http.Header, body []byte, secret string) (string, bool) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return "", false
	}
	return h.Get(standardwebhooks.HeaderWebhookID), wh.Verify(body, h) == nil
}

func TestStandardWebhooksAgreesWithTheOfficialLibrary(t *testing.T) { agree(t, standardMatrix()) }

func standardMatrix() matrix {
	const current, old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "b2xkLWtleS1vbGQta2V5" // the old one without whsec_
	const id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
	now := time.Now()
	sign := func(at time.Time, s ...string) http.Header { return webhooktest.StandardWebhooks(body, id, at, s...) }
	official := func(at time.Time, msg, s string) http.Header {
		wh, _ := standardwebhooks.NewWebhook(s)
		sig, _ := wh.Sign(msg, at, body)
		return http.Header{"Webhook-Id": {msg}, "Webhook-Timestamp": {strconv.FormatInt(at.Unix(), 10)}, "Webhook-Signature": {sig}}
	}
	good := official(now, id, current)
	sig := good.Get("webhook-signature")
	rows := []row{
		{"signed by the official library", good, body},
		{"signed by the old secret (no whsec_) during a rotation", sign(now, old), body},
		{"two v1, an unknown secret's first", sign(now, "whsec_b3RoZXI=", current), body},
		{"a v2 before the v1", with(good, "webhook-signature", "v2,AAAA "+sig), body},
		{"v2 only", with(good, "webhook-signature", "v2,"+strings.TrimPrefix(sig, "v1,")), body},
		{"an entry with a third part", with(good, "webhook-signature", sig+",extra"), body},
		{"two spaces between entries", with(good, "webhook-signature", "v1,AAAA  "+sig), body},
		{"another secret", sign(now, "whsec_b3RoZXI="), body},
		{"a tampered body", good, append(body, ' ')},
		{"another webhook-id under the signature", with(good, "webhook-id", "msg_2"), body},
		{"4 minutes old", official(now.Add(-4*time.Minute), id, current), body},
		{"6 minutes old", official(now.Add(-6*time.Minute), id, current), body},
		{"4 minutes ahead", official(now.Add(4*time.Minute), id, current), body},
		{"6 minutes ahead", official(now.Add(6*time.Minute), id, current), body},
		{"a timestamp in milliseconds", with(good, "webhook-timestamp", strconv.FormatInt(now.UnixMilli(), 10)), body},
		{"a timestamp with a plus sign", with(good, "webhook-timestamp", "+"+strconv.FormatInt(now.Unix(), 10)), body},
		{"a timestamp not a number", with(good, "webhook-timestamp", "now"), body},
		{"no webhook-id", with(good, "webhook-id", ""), body},
		{"no webhook-timestamp", with(good, "webhook-timestamp", ""), body},
		{"no webhook-signature", with(good, "webhook-signature", ""), body},
		{"the signature in hex", with(good, "webhook-signature", "v1,"+strings.Repeat("ab", 32)), body},
		{"the signature without its padding", with(good, "webhook-signature", strings.TrimRight(sig, "=")), body},
		{"the signature header twice, the same value", twice(good, "webhook-signature", sig), body},
	}
	return matrix{
		rows:    rows,
		secrets: []string{current, old},
		one:     standardOfficial,
		clocked: true,
		build: func(s [][]byte, now func() time.Time) httpkey.Verifier {
			return webhook.StandardWebhooks{Secrets: s, Now: now}
		},
	}
}
