package webhook

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
)

// Shopify verifies Shopify's webhooks as Shopify documents them
// (https://shopify.dev/docs/apps/build/webhooks/verify-deliveries):
// X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of the raw body under the
// app's client secret. Any of Secrets passes: Shopify documents that after
// a rotation of the client secret it may sign with the old one for up to an
// hour, so list both.
//
// The key is "shopify:" and X-Shopify-Event-Id, the identifier Shopify
// documents for ignoring duplicates
// (https://shopify.dev/docs/apps/build/webhooks/ignore-duplicates): its
// retries (8 over 4 hours) carry the original payload and the same event id,
// and two subscriptions to one topic deliver one event twice. The id is not
// signed: the body is part of the payload hash, so a forged id that names
// another event with this body is a mismatch (422), never a run, but a
// captured delivery sent again under a made-up id runs again. KeyOnBody
// closes that at the price of keying on the signed body (the SHA-256 of
// the body) instead, as GitHub's verifier does.
type Shopify struct {
	// Secrets are the app's client secrets, the newest first.
	Secrets [][]byte
	// KeyOnBody keys on the SHA-256 of the signed body instead of the
	// unsigned X-Shopify-Event-Id. Default: false.
	KeyOnBody bool
}

// Verify implements httpkey.Verifier.
func (s Shopify) Verify(r *http.Request, body []byte) (string, error) {
	const p = "shopify"
	if err := noSecret(p, s.Secrets); err != nil {
		return "", err
	}
	values := r.Header.Values("X-Shopify-Hmac-Sha256")
	if len(values) != 1 {
		return "", refuse(p, "header", "want one X-Shopify-Hmac-Sha256 header, got %d", len(values))
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(values[0]))
	if err != nil || len(sig) != sha256.Size {
		return "", refuse(p, "header", "X-Shopify-Hmac-Sha256 is not the base64 of 32 bytes")
	}
	if !anyMatch(s.Secrets, [][]byte{sig}, body) {
		return "", refuse(p, "signature", "the signature matches none of %d secrets", len(s.Secrets))
	}
	if s.KeyOnBody {
		sum := sha256.Sum256(body)
		return "shopify:" + hex.EncodeToString(sum[:]), nil
	}
	id := r.Header.Get("X-Shopify-Event-Id")
	if id == "" {
		return "", refuse(p, "event id", "the delivery has no X-Shopify-Event-Id")
	}
	return "shopify:" + id, nil
}
