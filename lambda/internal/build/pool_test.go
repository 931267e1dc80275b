package build

import (
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// TestPoolKeepsTheConcurrency: the DynamoDB client's pool keeps at least
// BatchConcurrency idle connections, in all and to its one host, and no
// fewer than the SDK's defaults (100 in all).
func TestPoolKeepsTheConcurrency(t *testing.T) {
	for _, conns := range []int{1, 10, 32, 100, 256} {
		client, ok := pooled(awshttp.NewBuildableClient(), conns).(oneWrite)
		if !ok {
			t.Fatalf("pooled returned %T", client)
		}
		tr := client.HTTPClient.(*awshttp.BuildableClient).GetTransport()
		if tr.MaxIdleConns < max(conns, 100) || tr.MaxIdleConnsPerHost < max(conns, 100) {
			t.Errorf("concurrency %d: MaxIdleConns %d, MaxIdleConnsPerHost %d; want at least %d each", conns, tr.MaxIdleConns, tr.MaxIdleConnsPerHost, max(conns, 100))
		}
	}
}
