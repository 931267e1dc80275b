package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/httpkey"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
)

// Acme is a provider of your own: a signature header of hex HMAC-SHA256
// over the body, and the event id in a header. Verify is all it takes.
type Acme struct{ Secret []byte }

func (a Acme) Verify(r *http.Request, body []byte) (string, error) {
	sig, err := hex.DecodeString(r.Header.Get("Acme-Signature"))
	mac := hmac.New(sha256.New, a.Secret)
	mac.Write(body)
	if err != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		return "", errors.New("acme: signature: no match")
	}
	return r.Header.Get("Acme-Event"), nil
}

// A webhook receiver for a provider of your own: the provider's retry of a
// delivery runs the handler once, and a forged delivery gets 401 without a
// store request.
func Example() {
	guard, _ := idempotency.NewGuard(storetest.NewMemoryStore(), idempotency.Config{Namespace: "hooks"})
	runs := 0
	h := httpkey.New(guard, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++ }),
		httpkey.Config{Verifier: Acme{Secret: []byte("s3cret")}, Logger: slog.New(slog.DiscardHandler), Metrics: io.Discard})

	body := `{"paid":true}`
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(body))
	for _, sig := range []string{hex.EncodeToString(mac.Sum(nil)), hex.EncodeToString(mac.Sum(nil)), "forged"} {
		r := httptest.NewRequest("POST", "/hooks/acme", strings.NewReader(body))
		r.Header.Set("Acme-Signature", sig)
		r.Header.Set("Acme-Event", "ev-7")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d replayed=%q\n", w.Code, w.Header().Get(httpkey.HeaderReplayed))
	}
	fmt.Println("runs:", runs)
	// Output:
	// 200 replayed=""
	// 200 replayed="true"
	// 401 replayed=""
	// runs: 1
}
