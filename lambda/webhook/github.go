package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// GitHub verifies GitHub's webhooks as GitHub documents them
// (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
// X-Hub-Signature-256 is "sha256=" and the hex HMAC-SHA256 of the raw body
// under the webhook's secret. Any of Secrets passes, for a rotation.
//
// The key is "github:" and the SHA-256 of the signed body, not the
// X-GitHub-Delivery id. GitHub retries nothing by itself, and a redelivery
// (by hand or through the API) sends the same body under the same delivery
// id, so both keys find it; but the delivery id is not signed and GitHub's
// signature carries no timestamp, so keyed on the id, whoever captured one
// signed delivery could make it run again at will by sending it under a new
// id. Keyed on the signed body, a replay within the business window is a
// duplicate. The price: two deliveries with byte-identical bodies are one
// fact, which GitHub's payloads (each with its own ids: the hook, the
// commit, the run, the action) do not produce. After the window a captured
// delivery can run again under either key: rotate the secret if one leaks.
type GitHub struct {
	// Secrets are the webhook's secrets, the newest first.
	Secrets [][]byte
}

// Verify implements httpkey.Verifier.
func (g GitHub) Verify(r *http.Request, body []byte) (string, error) {
	const p = "github"
	if err := noSecret(p, g.Secrets); err != nil {
		return "", err
	}
	values := r.Header.Values("X-Hub-Signature-256")
	if len(values) != 1 {
		return "", refuse(p, "header", "want one X-Hub-Signature-256 header, got %d", len(values))
	}
	h, ok := strings.CutPrefix(values[0], "sha256=")
	sig, err := hex.DecodeString(h)
	if !ok || err != nil || len(sig) != sha256.Size {
		return "", refuse(p, "header", "X-Hub-Signature-256 is not sha256= and 64 hex digits")
	}
	if !anyMatch(g.Secrets, [][]byte{sig}, body) {
		return "", refuse(p, "signature", "the signature matches none of %d secrets", len(g.Secrets))
	}
	sum := sha256.Sum256(body)
	return "github:" + hex.EncodeToString(sum[:]), nil
}
