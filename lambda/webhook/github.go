package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// GitHub verifies GitHub's webhooks as GitHub documents them
// (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries)
// and as go-github's ValidatePayloadFromBody judges them:
// X-Hub-Signature-256 is "sha256=" and the hex HMAC-SHA256 of the raw body
// under the webhook's secret. Any of Secrets passes, for a rotation.
//
// Refused where go-github accepts (none of them is a request GitHub sends):
// "sha1=" or "sha512=" in X-Hub-Signature-256 (go-github takes the hash the
// prefix names; GitHub's SHA-256 header is SHA-256), and two
// X-Hub-Signature-256 fields with different values (it is given the first).
//
// The key is the hex SHA-256 of the signed body, not the X-GitHub-Delivery
// id. GitHub retries nothing by itself, and a redelivery (by hand or through
// the API) sends the same body under the same delivery id, so both keys
// find it; but the delivery id is not signed and GitHub's signature carries
// no timestamp, so keyed on the id, whoever captured one signed delivery
// could make it run again at will by sending it under a new id. Keyed on the
// signed body, a replay within the business window is a duplicate. The
// price: two deliveries with byte-identical bodies are one fact, which
// GitHub's payloads (each with its own ids: the hook, the commit, the run,
// the action) do not produce. After the window a captured delivery can run
// again under either key: rotate the secret if one leaks.
type GitHub struct {
	// Secrets are the webhook's secrets, the newest first.
	Secrets [][]byte
}

// Verify implements httpkey.Verifier.
func (g GitHub) Verify(r *http.Request, body []byte) (string, error) {
	const p = "github"
	value, err := signature(r, p, g.Secrets, "X-Hub-Signature-256")
	if err != nil {
		return "", err
	}
	h, ok := strings.CutPrefix(value, "sha256=")
	sig, err := hex.DecodeString(h)
	if !ok || err != nil || len(sig) != sha256.Size {
		return "", refuse(p, "header", "X-Hub-Signature-256 is not sha256= and 64 hex digits")
	}
	if !signedBy(g.Secrets, [][]byte{sig}, nil, body) {
		return "", refuse(p, "signature", "the signature matches none of %d secrets", len(g.Secrets))
	}
	return bodyKey(body), nil
}

// bodyKey is the key of a delivery keyed on its signed body: the hex
// SHA-256 of the body.
func bodyKey(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
