package ops_test

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// signedRegions is an HTTP transport that notes the Region each request is
// signed for (SigV4's credential scope, "Credential=KEY/DATE/REGION/…").
type signedRegions struct {
	mu      sync.Mutex
	regions map[string]bool
}

var credentialScope = regexp.MustCompile(`Credential=[^/]+/[0-9]+/([a-z0-9-]+)/`)

func (s *signedRegions) RoundTrip(req *http.Request) (*http.Response, error) {
	if m := credentialScope.FindStringSubmatch(req.Header.Get("Authorization")); m != nil {
		s.mu.Lock()
		s.regions[m[1]] = true
		s.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestIdemctlWorksFromEitherRegion: a multi-Region strongly consistent
// table has the same name in each Region, so one command line, with
// --region naming either Region, shows the fact's record: every request of
// the command goes to (is signed for) that Region. kumo keeps one store
// whatever the Region asked, which stands here for the table's replicas,
// as the demo's shared store does: what it shows is that the command
// reaches each Region with the same table name, not MRSC's replication.
func TestIdemctlWorksFromEitherRegion(t *testing.T) {
	w := newWorld(t, false)
	w.complete("o-7", "receipt-7")
	for _, region := range []string{"eu-west-1", "eu-west-2"} {
		seen := &signedRegions{regions: map[string]bool{}}
		cfg := w.cfg.Copy()
		cfg.HTTPClient = &http.Client{Transport: seen}
		var out, errOut bytes.Buffer
		status := ops.Main([]string{"show", "--endpoint-url", w.endpoint, "--region", region, "--table", w.table, "--namespace", w.ns,
			"--consumer", "Shop/Charge", "--env", "MESSAGE_DELIVERY=raw", "o-7"}, ops.WithAWSConfig(cfg), ops.WithOutput(&out, &errOut))
		if status != ops.ExitOK || !strings.Contains(out.String(), "COMPLETED") || !strings.Contains(out.String(), "duplicate: completed") {
			t.Errorf("--region %s: exit %d\n%s%s", region, status, out.String(), errOut.String())
		}
		if len(seen.regions) != 1 || !seen.regions[region] {
			t.Errorf("--region %s: requests signed for %v", region, seen.regions)
		}
	}
}
