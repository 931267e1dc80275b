// Package webhooktest signs webhook requests as each provider signs them,
// so that a handler's test needs no HMAC code: each function returns the
// headers of a delivery of body, to set on a request (httptest.NewRequest)
// sent to the handler under test. The secrets are the ones the verifier
// under test holds (package webhook).
//
// Each signer follows the provider's documentation, written apart from the
// verifiers (the references are on each function), so that a test of a
// verifier against it is a test of two readings of one document.
package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Stripe returns the Stripe-Signature header of a delivery signed at t, as
// Stripe signs it (https://docs.stripe.com/webhooks#verify-manually):
// "t=<unix seconds>" and one "v1=<hex HMAC-SHA256 of t.body>" per secret,
// in order (during a rotation Stripe signs with each active secret).
func Stripe(body []byte, t time.Time, secrets ...string) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	v := "t=" + ts
	for _, s := range secrets {
		v += ",v1=" + hex.EncodeToString(mac([]byte(s), ts+".", body))
	}
	return http.Header{"Stripe-Signature": {v}}
}

// GitHub returns the X-Hub-Signature-256 header of a delivery, as GitHub
// signs it (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
// "sha256=" and the hex HMAC-SHA256 of the body.
func GitHub(body []byte, secret string) http.Header {
	return http.Header{"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac([]byte(secret), "", body))}}
}

// Shopify returns the X-Shopify-Hmac-Sha256 and X-Shopify-Event-Id headers
// of a delivery of the event eventID, as Shopify signs it
// (https://shopify.dev/docs/apps/build/webhooks/verify-deliveries): the
// base64 HMAC-SHA256 of the body. Shopify's newer deliveries spell the
// same headers without "X-" (Shopify-Hmac-Sha256, Shopify-Event-Id).
func Shopify(body []byte, eventID, secret string) http.Header {
	return http.Header{
		"X-Shopify-Hmac-Sha256": {base64.StdEncoding.EncodeToString(mac([]byte(secret), "", body))},
		"X-Shopify-Event-Id":    {eventID},
	}
}

// StandardWebhooks returns the webhook-id, webhook-timestamp and
// webhook-signature headers of the message id sent at t, as the Standard
// Webhooks specification signs it (https://www.standardwebhooks.com): one
// "v1,<base64 HMAC-SHA256 of id.t.body>" per secret, space-separated, each
// secret "whsec_" and the base64 of its key (or that base64 alone). It
// panics if a secret is not base64, as httptest.NewRequest panics on a
// malformed request: a mistake of the test.
func StandardWebhooks(body []byte, id string, t time.Time, secrets ...string) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			panic("webhooktest: a Standard Webhooks secret is whsec_ and base64: " + err.Error())
		}
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac(key, id+"."+ts+".", body))
	}
	return http.Header{
		"Webhook-Id":        {id},
		"Webhook-Timestamp": {ts},
		"Webhook-Signature": {strings.Join(sigs, " ")},
	}
}

// Slack returns the X-Slack-Request-Timestamp and X-Slack-Signature headers
// of a request sent at t, as Slack signs it
// (https://api.slack.com/authentication/verifying-requests-from-slack):
// "v0=" and the hex HMAC-SHA256 of "v0:<t>:<body>".
func Slack(body []byte, t time.Time, secret string) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	return http.Header{
		"X-Slack-Request-Timestamp": {ts},
		"X-Slack-Signature":         {"v0=" + hex.EncodeToString(mac([]byte(secret), "v0:"+ts+":", body))},
	}
}

func mac(key []byte, prefix string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(prefix))
	m.Write(body)
	return m.Sum(nil)
}
