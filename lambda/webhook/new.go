package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// Providers are the names New knows.
var Providers = []string{"stripe", "github", "shopify"}

// New returns the verifier of a provider by its name (one of Providers),
// over secrets, with its defaults: how the handler builds the verifier the
// contract names.
func New(provider string, secrets [][]byte) (httpkey.Verifier, error) {
	switch provider {
	case "stripe":
		return Stripe{Secrets: secrets}, nil
	case "github":
		return GitHub{Secrets: secrets}, nil
	case "shopify":
		return Shopify{Secrets: secrets}, nil
	}
	return nil, fmt.Errorf("webhook provider %q: want one of %s", provider, strings.Join(Providers, ", "))
}

// ParseSecrets reads the secrets of a Secrets Manager secret's value: a
// JSON array of strings (["new","old"], during a rotation) or one secret
// as it is. Empty secrets are refused.
func ParseSecrets(value string) ([][]byte, error) {
	var list []string
	if strings.HasPrefix(strings.TrimSpace(value), "[") {
		if err := json.Unmarshal([]byte(value), &list); err != nil {
			return nil, fmt.Errorf("the secret looks like a JSON array but is not one of strings: %v", err)
		}
	} else {
		list = []string{value}
	}
	out := make([][]byte, 0, len(list))
	for i, s := range list {
		if s == "" {
			return nil, fmt.Errorf("secret %d of %d is empty", i+1, len(list))
		}
		out = append(out, []byte(s))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the secret lists no secret")
	}
	return out, nil
}
