package endpoint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/propdoc"
)

// TestPropsDocStatesTheDefaults: users read each default in the props' doc
// comments, and the construct applies the constants of endpoint.go: a
// changed constant fails until the doc says the new value.
func TestPropsDocStatesTheDefaults(t *testing.T) {
	for field, want := range map[string]string{
		"ThrottlingRateLimit": fmt.Sprintf("Default: %d requests per second, and a burst of %d.", defaultRateLimit, defaultBurstLimit),
		"SignatureFailures":   fmt.Sprintf("Default: %d signature failures in five minutes.", defaultSignatureFailures),
		"InProgress":          fmt.Sprintf("Default: %d answers 409 in five minutes.", defaultInProgress),
	} {
		doc, err := propdoc.Field("endpoint.go", "IdempotentEndpointProps", field)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, want) {
			t.Errorf("IdempotentEndpointProps.%s's doc does not state its default %q: %s", field, want, doc)
		}
	}
}
