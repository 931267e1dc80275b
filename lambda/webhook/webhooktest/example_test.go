package webhooktest_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/webhook/webhooktest"
)

// A handler's test signs its deliveries as Stripe would, with no HMAC code
// of its own.
func Example() {
	body := `{"id":"evt_1","object":"event","type":"payment_intent.succeeded"}`
	r := httptest.NewRequest("POST", "/hooks/stripe", strings.NewReader(body))
	for name, values := range webhooktest.Stripe([]byte(body), time.Now(), "whsec_test") {
		r.Header[name] = values
	}

	key, err := webhook.Stripe{Secrets: [][]byte{[]byte("whsec_test")}}.Verify(r, []byte(body))
	fmt.Println(key, err)
	// Output: evt_1 <nil>
}
