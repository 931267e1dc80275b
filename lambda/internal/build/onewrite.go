package build

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// maxOneWriteBody is the largest request body that oneWrite copies: the
// idempotency store's requests are well under it; larger ones gain little.
const maxOneWriteBody = 64 << 10

// oneWrite is an aws.HTTPClient that sends a request's headers and a small
// body in one write. net/http writes the headers of a request whose body it
// does not know to be in memory, then the body: two TLS records and two
// system calls per request. The SDK's bodies are in memory, but behind
// wrappers that net/http cannot see through, so oneWrite copies a body of
// known length into a bytes.Reader, which net/http sends with the headers.
// The request is the SDK's attempt's own (it builds one per attempt), so
// retries are unchanged.
type oneWrite struct{ aws.HTTPClient }

// Do implements aws.HTTPClient.
func (c oneWrite) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength > 0 && req.ContentLength <= maxOneWriteBody {
		body := make([]byte, req.ContentLength)
		_, err := io.ReadFull(req.Body, body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return c.HTTPClient.Do(req)
}
