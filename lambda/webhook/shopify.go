package webhook

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// Shopify verifies Shopify's webhooks as Shopify documents them
// (https://shopify.dev/docs/apps/build/webhooks/verify-deliveries): the
// HMAC header is the base64 HMAC-SHA256 of the raw body under the app's
// client secret. Shopify has no official Go library: test/webhookdiff holds
// this to the documented algorithm and its documented vector instead.
//
// The headers come in two spellings, X-Shopify-Hmac-Sha256 and
// X-Shopify-Event-Id, and, in Shopify's newer deliveries (Events,
// https://shopify.dev/docs/apps/build/events/verify-deliveries and
// https://shopify.dev/docs/apps/build/events/delivery-structure#headers),
// Shopify-Hmac-Sha256 and Shopify-Event-Id; either is accepted, as Shopify's
// own libraries accept either. When both are present they must agree, as a
// repeated header must (the package's header rule): else the header check
// refuses.
//
// Any of Secrets passes: Shopify documents that after a rotation of the
// client secret it may sign with the old one for up to an hour, so list
// both.
//
// A delivery whose signature verified without an event id is refused by
// the check "event id", which the handler answers 400: the body is
// authentic, the delivery names no event. Two event ids that differ are
// refused by the header check (401), as every header repeated with
// different values is: the provider never sends two, so one was added on
// the way.
//
// The key is the event id header, the identifier Shopify documents for
// ignoring duplicates
// (https://shopify.dev/docs/apps/build/webhooks/ignore-duplicates): its
// retries (8 over 4 hours) carry the original payload and the same event id,
// and two subscriptions to one topic deliver one event twice. The id is not
// signed: the body is part of the payload hash, so a forged id that names
// another event with this body is a mismatch (422), never a run, but a
// captured delivery sent again under a made-up id runs again. KeyOnBody
// closes that at the price of keying on the signed body (the hex SHA-256 of
// the body) instead, as GitHub's verifier does.
type Shopify struct {
	// Secrets are the app's client secrets, the newest first.
	Secrets [][]byte
	// KeyOnBody keys on the SHA-256 of the signed body instead of the
	// unsigned event id header. Default: false.
	KeyOnBody bool
}

// Verify implements httpkey.Verifier.
func (s Shopify) Verify(r *http.Request, body []byte) (string, error) {
	const p = "shopify"
	value, err := signature(r, p, s.Secrets, "X-Shopify-Hmac-Sha256", "Shopify-Hmac-Sha256")
	if err != nil {
		return "", err
	}
	if sig, err := base64.StdEncoding.Strict().DecodeString(value); err != nil || len(sig) != sha256.Size {
		return "", refuse(p, "header", "the HMAC header is not the base64 of 32 bytes")
	}
	// The base64 text is compared, as Shopify's examples compare it.
	if !signedBy(s.Secrets, [][]byte{[]byte(value)}, b64, body) {
		return "", refuse(p, "signature", "the signature matches none of %d secrets", len(s.Secrets))
	}
	if s.KeyOnBody {
		return bodyKey(body), nil
	}
	id, err := header(r, p, "X-Shopify-Event-Id", "Shopify-Event-Id")
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", refuse(p, checkEvent, "the delivery has no X-Shopify-Event-Id or Shopify-Event-Id")
	}
	return id, nil
}
