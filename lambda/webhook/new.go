package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
)

// provider is one entry of the table that New reads: a provider's name
// (one of contract.Providers, which gives its redelivery horizon) and its
// verifier over secrets.
type provider struct {
	name   string
	verify func(secrets [][]byte) (httpkey.Verifier, error)
}

// providers are the verifiers of the providers of contract.Providers, in
// the order of its table.
var providers = []provider{
	{"stripe", func(s [][]byte) (httpkey.Verifier, error) { return Stripe{Secrets: s}, nil }},
	{"github", func(s [][]byte) (httpkey.Verifier, error) { return GitHub{Secrets: s}, nil }},
	{"shopify", func(s [][]byte) (httpkey.Verifier, error) { return Shopify{Secrets: s}, nil }},
	{"standard-webhooks", newStandardWebhooks},
	{"slack", func(s [][]byte) (httpkey.Verifier, error) { return Slack{Secrets: s}, nil }},
}

// New returns the verifier of a provider by its name (one of contract.Providers),
// over secrets, with its defaults: how the handler builds the verifier the
// contract names. A secret the provider's scheme cannot use (Standard
// Webhooks: not base64) is refused here, at init.
func New(provider string, secrets [][]byte) (httpkey.Verifier, error) {
	for _, p := range providers {
		if p.name == provider {
			return p.verify(secrets)
		}
	}
	return nil, fmt.Errorf("webhook provider %q: want one of %s", provider, strings.Join(contract.Providers, ", "))
}

func newStandardWebhooks(secrets [][]byte) (httpkey.Verifier, error) {
	if _, err := standardKeys(secrets); err != nil {
		return nil, err
	}
	return StandardWebhooks{Secrets: secrets}, nil
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
