package webhook

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// standardWebhooksTolerance is how far a webhook-timestamp may be from now,
// on either side: 5 minutes, as the official libraries check it.
const standardWebhooksTolerance = 5 * time.Minute

// StandardWebhooks verifies webhooks signed as the Standard Webhooks
// specification defines them (https://www.standardwebhooks.com,
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
// Svix's scheme, and as its official Go library
// (github.com/standard-webhooks/standard-webhooks/libraries/go) judges
// them: the headers webhook-id, webhook-timestamp (unix seconds) and
// webhook-signature, a space-separated list of "v1,<base64>" entries (other
// versions are ignored; several v1 during a rotation), each the base64
// HMAC-SHA256 of id + "." + timestamp + "." + body. A timestamp further than
// 5 minutes (standardWebhooksTolerance) from now, on either side, is refused.
//
// A secret is "whsec_" and the base64 of the key, or that base64 without
// the prefix: the official library trims the prefix when it is there and
// decodes the rest, so both spellings are the same key. A secret that is
// not base64 is refused (check "secret"); New refuses it at once.
//
// Refused where the official library accepts: two fields of one of the
// three headers with different values (it reads the first), and a secret
// whose key is empty ("whsec_").
//
// The key is the webhook-id: it is signed, and the specification makes it
// the same on every retry of a message, so a retry is a duplicate and a
// replay under a new id fails the signature.
type StandardWebhooks struct {
	// Secrets are the endpoint's signing secrets ("whsec_…"), the newest
	// first.
	Secrets [][]byte
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Verify implements httpkey.Verifier.
func (s StandardWebhooks) Verify(r *http.Request, body []byte) (string, error) {
	const p = "standard-webhooks"
	keys, err := standardKeys(s.Secrets)
	if err != nil {
		return "", err
	}
	var v [3]string
	for i, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if v[i], err = required(r, p, name); err != nil {
			return "", err
		}
	}
	id, sig := v[0], v[2]
	t, err := unixTime(p, "webhook-timestamp", v[1], s.Now, standardWebhooksTolerance, standardWebhooksTolerance)
	if err != nil {
		return "", err
	}
	var sigs [][]byte
	for _, entry := range strings.Split(sig, " ") {
		if parts := strings.Split(entry, ","); len(parts) >= 2 && parts[0] == "v1" {
			sigs = append(sigs, []byte(parts[1]))
		}
	}
	signed := []byte(id + "." + strconv.FormatInt(t, 10) + ".")
	if !signedBy(keys, sigs, b64, signed, body) {
		return "", refuse(p, "signature", "none of %d v1 signatures matches any of %d secrets", len(sigs), len(keys))
	}
	return id, nil
}

// standardKeys decodes Standard Webhooks secrets to their HMAC keys.
func standardKeys(secrets [][]byte) ([][]byte, error) {
	const p = "standard-webhooks"
	keys := make([][]byte, 0, len(secrets))
	for i, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(s), "whsec_"))
		if err != nil {
			return nil, refuse(p, "secret", "secret %d of %d is not whsec_ and base64", i+1, len(secrets))
		}
		keys = append(keys, key)
	}
	return keys, noSecret(p, keys)
}

// b64 is the base64 text of a MAC, as Standard Webhooks' library compares
// it (the text, not the decoded bytes).
func b64(mac []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(mac))
}
