package storetest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// CheckableHashes returns the digests of payload that anyone can compute
// without a key secret, in the encodings a log line or a table would carry
// them: the guard's unkeyed payload hash (the SHA-256 of the canonical
// payload, without its "v2:" tag, when payload is JSON the guard accepts)
// and the SHA-256 of the payload as written, in base64url, standard base64
// and hex. Whoever reads one of them can test a guess of the payload; under
// idempotency.Config.KeySecret no record, log line or metric may hold one
// (DESIGN.md, "Hashed keys").
func CheckableHashes(payload []byte) []string {
	sum := sha256.Sum256(payload)
	out := []string{
		base64.RawURLEncoding.EncodeToString(sum[:]),
		base64.StdEncoding.EncodeToString(sum[:]),
		hex.EncodeToString(sum[:]),
	}
	plain, err := idempotency.NewGuard(NewMemoryStore(), idempotency.Config{Namespace: "checkable"})
	if err != nil {
		return out
	}
	if fact, err := plain.Fact("k", payload); err == nil {
		out = append(out, strings.TrimPrefix(fact.Hash, "v2:"))
	}
	return out
}
