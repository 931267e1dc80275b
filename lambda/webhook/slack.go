package webhook

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// slackTolerance is how far X-Slack-Request-Timestamp may be from now, on
// either side: 5 minutes, as slack-go's SecretsVerifier checks it.
const slackTolerance = 5 * time.Minute

// Slack verifies Slack's requests as Slack documents them
// (https://api.slack.com/authentication/verifying-requests-from-slack) and
// as slack-go's SecretsVerifier judges them: X-Slack-Signature is "v0=" and
// the hex HMAC-SHA256 under the app's signing secret of "v0:", the
// X-Slack-Request-Timestamp header as sent, ":", and the raw body. A
// timestamp further than 5 minutes (slackTolerance) from now, on either side, is
// refused. Any of Secrets passes, for a rotation.
//
// Refused where slack-go accepts: two fields of either header with
// different values (it reads the first).
//
// The key is the Events API's event_id, from the signed JSON body: Slack
// retries an event (three times, over minutes, each with X-Slack-Retry-Num)
// with the same event_id, so a retry is a duplicate. A body without one
// (a slash command or an interaction, form-encoded; a url_verification)
// is keyed on its signed body, the hex SHA-256 of the body, as GitHub's
// verifier is: Slack does not retry those, each invocation's body is its
// own (it holds a trigger_id that Slack makes for it), and the unsigned
// headers hold no id; keyed on the body, a captured request replayed within
// the business window is a duplicate rather than a second run.
type Slack struct {
	// Secrets are the app's signing secrets, the newest first.
	Secrets [][]byte
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Verify implements httpkey.Verifier.
func (s Slack) Verify(r *http.Request, body []byte) (string, error) {
	const p = "slack"
	value, err := signature(r, p, s.Secrets, "X-Slack-Signature")
	if err != nil {
		return "", err
	}
	ts, err := required(r, p, "X-Slack-Request-Timestamp")
	if err != nil {
		return "", err
	}
	h, ok := strings.CutPrefix(value, "v0=")
	sig, err := hex.DecodeString(h)
	if !ok || err != nil || len(sig) != 32 {
		return "", refuse(p, "header", "X-Slack-Signature is not v0= and 64 hex digits")
	}
	if _, err := unixTime(p, "X-Slack-Request-Timestamp", ts, s.Now, slackTolerance, slackTolerance); err != nil {
		return "", err
	}
	if !signedBy(s.Secrets, [][]byte{sig}, nil, []byte("v0:"+ts+":"), body) {
		return "", refuse(p, "signature", "the signature matches none of %d secrets", len(s.Secrets))
	}
	return slackKey(body), nil
}

// slackKey is the event_id of an Events API body, else the body's hash.
func slackKey(body []byte) string {
	var event struct {
		EventID string `json:"event_id"`
	}
	if json.Unmarshal(body, &event) == nil && event.EventID != "" {
		return event.EventID
	}
	return bodyKey(body)
}
