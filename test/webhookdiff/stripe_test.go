package webhookdiff

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// stripeOfficial is stripe-go's ConstructEventWithOptions over the first
// Stripe-Signature field (Header.Get, as Stripe's examples read it), with
// the default tolerance; the API version of the test events is not
// stripe-go's concern here.
func stripeOfficial(h http.Header, body []byte, secret string) (string, bool) {
	e, err := stripewebhook.ConstructEventWithOptions(body, h.Get("Stripe-Signature"), secret,
		stripewebhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	return e.ID, err == nil
}

func TestStripeAgreesWithStripeGo(t *testing.T) { agree(t, stripeMatrix()) }

func stripeMatrix() matrix {
	const current, old = "whsec_current", "whsec_old"
	body := []byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded","api_version":"2025-01-27.acacia"}`)
	now := time.Now()
	sign := func(at time.Time, s ...string) http.Header { return webhooktest.Stripe(body, at, s...) }
	official := func(at time.Time, s string) http.Header {
		p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: s, Timestamp: at})
		return http.Header{"Stripe-Signature": {p.Header}}
	}
	good := sign(now, current).Get("Stripe-Signature")
	ts := strconv.FormatInt(now.Unix(), 10)
	v1 := strings.TrimPrefix(good, "t="+ts+",")
	rows := []row{
		{"signed by stripe-go's test signer", official(now, current), body},
		{"signed by the old secret during a rotation", sign(now, old), body},
		{"two v1, an unknown secret's first", sign(now, "whsec_unknown", current), body},
		{"another secret", sign(now, "whsec_other"), body},
		{"a tampered body", sign(now, current), append([]byte(" "), body...)},
		{"4 minutes old", sign(now.Add(-4*time.Minute), current), body},
		{"6 minutes old", official(now.Add(-6*time.Minute), current), body},
		{"an hour ahead", sign(now.Add(time.Hour), current), body},
		{"a timestamp in milliseconds", sign(time.Unix(now.UnixMilli(), 0), current), body},
		{"no header", http.Header{}, body},
		{"an empty header", http.Header{"Stripe-Signature": {""}}, body},
		{"malformed", http.Header{"Stripe-Signature": {"nonsense"}}, body},
		{"a space after the comma", http.Header{"Stripe-Signature": {"t=" + ts + ", " + v1}}, body},
		{"a space before the comma", http.Header{"Stripe-Signature": {"t=" + ts + " ," + v1}}, body},
		{"a trailing comma", http.Header{"Stripe-Signature": {good + ","}}, body},
		{"an element with two =", http.Header{"Stripe-Signature": {good + ",v1=ab=cd"}}, body},
		{"t is not a number", http.Header{"Stripe-Signature": {"t=now," + v1}}, body},
		{"no t", http.Header{"Stripe-Signature": {v1}}, body},
		{"v0 only", http.Header{"Stripe-Signature": {"t=" + ts + ",v0=" + strings.TrimPrefix(v1, "v1=")}}, body},
		{"a v1 not hex beside a good one", http.Header{"Stripe-Signature": {"t=" + ts + ",v1=zz," + v1}}, body},
		{"the signature in upper-case hex", http.Header{"Stripe-Signature": {"t=" + ts + ",v1=" + strings.ToUpper(strings.TrimPrefix(v1, "v1="))}}, body},
		{"the signature truncated", http.Header{"Stripe-Signature": {good[:len(good)-2]}}, body},
		{"the header twice, the same value", twice(sign(now, current), "Stripe-Signature", good), body},
	}
	return matrix{
		rows:    rows,
		secrets: []string{current, old},
		one:     stripeOfficial,
		clocked: true,
		build:   func(s [][]byte, now func() time.Time) httpkey.Verifier { return webhook.Stripe{Secrets: s, Now: now} },
	}
}
