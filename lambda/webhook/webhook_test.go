package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
)

func request(body string, hdr ...string) *http.Request {
	r := httptest.NewRequest("POST", "/hooks", strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

// signStripe signs as Stripe documents: the hex HMAC-SHA256 of t + "." +
// body under the signing secret.
func signStripe(secret string, t int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.%s", t, body)
	return hex.EncodeToString(mac.Sum(nil))
}

func refusal(t *testing.T, err error, check string) {
	t.Helper()
	var e *webhook.Error
	if !errors.As(err, &e) || !errors.Is(err, webhook.ErrUnauthorized) || e.Check != check {
		t.Fatalf("err = %v, want a refusal of the %s check", err, check)
	}
}

// noLeak fails if a refusal quotes a secret or the body.
func noLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("the refusal %q quotes %q", err, s)
		}
	}
}

const stripeBody = `{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded"}`

func TestStripe(t *testing.T) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	// The vector: Stripe's documented scheme (https://docs.stripe.com/webhooks#verify-manually),
	// computed apart from this code with Python's hmac module:
	// hmac.new(b"whsec_test_secret", b"1700000000." + body, sha256).hexdigest().
	const vector = "1ee8dd662a91c944c5fc90522bd8a6c2fa5ad2f05377bafef52d694497464c9a"
	if got := signStripe("whsec_test_secret", 1700000000, stripeBody); got != vector {
		t.Fatalf("the test's signer gives %s, the vector is %s", got, vector)
	}
	v := webhook.Stripe{Secrets: [][]byte{[]byte("whsec_new"), []byte("whsec_test_secret")}, Now: clock}
	key, err := v.Verify(request(stripeBody, "Stripe-Signature", "t=1700000000,v1="+vector), []byte(stripeBody))
	if err != nil || key != "stripe:evt_1NG8Du2eZvKYlo2CUI79vXWy" {
		t.Fatalf("the vector: %q, %v", key, err)
	}
	// A retry: the same event, a new t, signed again; during a rotation
	// Stripe sends one v1 per secret (and a v0 that is ignored).
	later := now.Add(time.Hour)
	v.Now = func() time.Time { return later }
	tl := later.Unix()
	hdr := fmt.Sprintf("t=%d,v1=%s,v1=%s,v0=%s", tl, signStripe("whsec_unknown", tl, stripeBody), signStripe("whsec_test_secret", tl, stripeBody), strings.Repeat("0", 64))
	if key2, err := v.Verify(request(stripeBody, "Stripe-Signature", hdr), []byte(stripeBody)); err != nil || key2 != key {
		t.Fatalf("the retry: %q, %v", key2, err)
	}
	for _, tc := range []struct {
		name, header, body, check string
	}{
		{"no header", "", stripeBody, "header"},
		{"no t", "v1=" + vector, stripeBody, "header"},
		{"no v1", "t=1700003600", stripeBody, "header"},
		{"garbage", "nonsense", stripeBody, "header"},
		{"too old: the vector an hour later", "t=1700000000,v1=" + vector, stripeBody, "timestamp"},
		{"from the future", fmt.Sprintf("t=%d,v1=%s", tl+301, signStripe("whsec_test_secret", tl+301, stripeBody)), stripeBody, "timestamp"},
		{"another secret", fmt.Sprintf("t=%d,v1=%s", tl, signStripe("whsec_other", tl, stripeBody)), stripeBody, "signature"},
		{"a changed body", fmt.Sprintf("t=%d,v1=%s", tl, signStripe("whsec_test_secret", tl, stripeBody)), stripeBody + " ", "signature"},
		{"a signed body without an id", fmt.Sprintf("t=%d,v1=%s", tl, signStripe("whsec_test_secret", tl, `{"object":"event"}`)), `{"object":"event"}`, "event id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{"Stripe-Signature", tc.header}
			}
			_, err := v.Verify(request(tc.body, hdr...), []byte(tc.body))
			refusal(t, err, tc.check)
			noLeak(t, err, "whsec_test_secret", "whsec_new", stripeBody)
		})
	}
	// Within the tolerance, on either side.
	for _, d := range []time.Duration{-300 * time.Second, 300 * time.Second} {
		ts := later.Add(d).Unix()
		if _, err := v.Verify(request(stripeBody, "Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", ts, signStripe("whsec_new", ts, stripeBody))), []byte(stripeBody)); err != nil {
			t.Errorf("t %v from now: %v", d, err)
		}
	}
	_, err = webhook.Stripe{}.Verify(request(stripeBody), []byte(stripeBody))
	refusal(t, err, "secret")
}

func TestGitHub(t *testing.T) {
	// GitHub's published test values ("Testing the webhook payload
	// validation", https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
	// secret "It's a Secret to Everybody", payload "Hello, World!".
	const (
		secret = "It's a Secret to Everybody"
		body   = "Hello, World!"
		sig    = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	)
	v := webhook.GitHub{Secrets: [][]byte{[]byte("rotated-in"), []byte(secret)}}
	key, err := v.Verify(request(body, "X-Hub-Signature-256", sig, "X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"), []byte(body))
	sum := sha256.Sum256([]byte(body))
	if err != nil || key != "github:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("the published vector: %q, %v", key, err)
	}
	// A redelivery under another (forged, unsigned) delivery id is the same fact.
	if k2, err := v.Verify(request(body, "X-Hub-Signature-256", sig, "X-GitHub-Delivery", "forged"), []byte(body)); err != nil || k2 != key {
		t.Fatalf("the redelivery: %q, %v", k2, err)
	}
	for _, tc := range []struct {
		name, header, body, check string
	}{
		{"no header", "", body, "header"},
		{"sha1 only", "sha1=" + strings.Repeat("0", 40), body, "header"},
		{"not hex", "sha256=zz", body, "header"},
		{"a changed body", sig, body + "!", "signature"},
		{"uppercase scheme", "SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", body, "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.header != "" {
				hdr = []string{"X-Hub-Signature-256", tc.header}
			}
			_, err := v.Verify(request(tc.body, hdr...), []byte(tc.body))
			refusal(t, err, tc.check)
			noLeak(t, err, secret, body)
		})
	}
	_, err = webhook.GitHub{Secrets: [][]byte{[]byte("wrong")}}.Verify(request(body, "X-Hub-Signature-256", sig), []byte(body))
	refusal(t, err, "signature")
}

func TestShopify(t *testing.T) {
	const body = `{"id":820982911946154508,"email":"jon@example.com"}`
	// Shopify's documented scheme (https://shopify.dev/docs/apps/build/webhooks/verify-deliveries),
	// computed apart from this code with Python:
	// base64.b64encode(hmac.new(b"shpss_test_secret", body, sha256).digest()).
	const vector = "LnwdZPLBbdjkBwPD/lDL1/rYEGby/GHPtL1aAH6Dxjc="
	mac := hmac.New(sha256.New, []byte("shpss_test_secret"))
	mac.Write([]byte(body))
	if got := base64.StdEncoding.EncodeToString(mac.Sum(nil)); got != vector {
		t.Fatalf("the test's signer gives %s", got)
	}
	v := webhook.Shopify{Secrets: [][]byte{[]byte("shpss_new"), []byte("shpss_test_secret")}}
	hdr := []string{"X-Shopify-Hmac-Sha256", vector, "X-Shopify-Event-Id", "98880550-7158-44d4-b7cd-2c97c8a091b5", "X-Shopify-Triggered-At", "2026-12-01T10:00:00Z"}
	key, err := v.Verify(request(body, hdr...), []byte(body))
	if err != nil || key != "shopify:98880550-7158-44d4-b7cd-2c97c8a091b5" {
		t.Fatalf("the vector: %q, %v", key, err)
	}
	// A retry: the original payload, the same event id, another Triggered-At.
	hdr[5] = "2026-12-01T10:05:00Z"
	if k2, err := v.Verify(request(body, hdr...), []byte(body)); err != nil || k2 != key {
		t.Fatalf("the retry: %q, %v", k2, err)
	}
	bodyKeyed := webhook.Shopify{Secrets: v.Secrets, KeyOnBody: true}
	if k3, err := bodyKeyed.Verify(request(body, hdr...), []byte(body)); err != nil || !strings.HasPrefix(k3, "shopify:") || k3 == key {
		t.Fatalf("keyed on the body: %q, %v", k3, err)
	}
	for _, tc := range []struct {
		name  string
		hdr   []string
		body  string
		check string
	}{
		{"no header", nil, body, "header"},
		{"hex instead of base64", []string{"X-Shopify-Hmac-Sha256", hex.EncodeToString(mac.Sum(nil)), "X-Shopify-Event-Id", "e"}, body, "header"},
		{"a changed body", []string{"X-Shopify-Hmac-Sha256", vector, "X-Shopify-Event-Id", "e"}, body + " ", "signature"},
		{"no event id", []string{"X-Shopify-Hmac-Sha256", vector}, body, "event id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(request(tc.body, tc.hdr...), []byte(tc.body))
			refusal(t, err, tc.check)
			noLeak(t, err, "shpss_test_secret", body)
		})
	}
}

func TestNewAndParseSecrets(t *testing.T) {
	for _, p := range webhook.Providers {
		if _, err := webhook.New(p, [][]byte{[]byte("s")}); err != nil {
			t.Errorf("New(%q): %v", p, err)
		}
	}
	if _, err := webhook.New("paypal", nil); err == nil {
		t.Error("New(paypal) accepted")
	}
	got, err := webhook.ParseSecrets(`["new","old"]`)
	if err != nil || len(got) != 2 || string(got[1]) != "old" {
		t.Fatalf("ParseSecrets(list) = %q, %v", got, err)
	}
	if got, err := webhook.ParseSecrets("whsec_x"); err != nil || len(got) != 1 || string(got[0]) != "whsec_x" {
		t.Fatalf("ParseSecrets(one) = %q, %v", got, err)
	}
	for _, bad := range []string{"", "[]", `[""]`, `[1]`} {
		if _, err := webhook.ParseSecrets(bad); err == nil {
			t.Errorf("ParseSecrets(%q) accepted", bad)
		}
	}
}
