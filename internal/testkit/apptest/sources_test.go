package apptest_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/cdktest/nagtest"
)

// TestSourcesPassCDKNag: the consumers of an EventBridge rule, of S3
// notifications (with CDK's Custom::S3BucketNotifications handler, whose
// findings carry their reasons) and of direct producers pass both packs
// with nothing but reasoned suppressions.
func TestSourcesPassCDKNag(t *testing.T) {
	for _, name := range []string{"EventBridge", "Bucket", "Direct"} {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			for _, pack := range []string{"AwsSolutions", "Serverless"} {
				var got nagtest.Findings
				cdktest.Must(t, func() { got = nagtest.FindingsOf(f.nag, pack) })
				all := append(got.Errors, got.Warnings...)
				sort.Strings(all)
				if len(all) > 0 {
					t.Errorf("%s: %d errors, %d warnings:\n%s", pack, len(got.Errors), len(got.Warnings), strings.Join(all, "\n"))
				}
			}
		})
	}
}
