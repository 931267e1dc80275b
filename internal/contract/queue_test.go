package contract_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// TestQueueProblems: the queue consumer's rules, each refused in words that name
// the setting, the value and the fix, every problem at once; the defaults
// keep them.
func TestQueueProblems(t *testing.T) {
	valid := func() contract.Settings {
		s := contract.Defaults(time.Minute)
		s.Table, s.Namespace, s.Consumer = "t", "n", "c"
		s.FinishBudget, s.MinRemaining = 2*time.Second, contract.DefaultMinRemaining(2*time.Second)
		s.MetricsNamespace = outcome.DefaultNamespace
		return s
	}
	if p := valid().Problems(); len(p) > 0 {
		t.Fatalf("the defaults: %v", p)
	}
	for name, tc := range map[string]struct {
		change func(c *contract.Settings)
		want   []string
	}{
		"no time for the effect":          {func(c *contract.Settings) { c.MinRemaining = 2 * time.Second }, []string{"MinRemaining 2s is not more than FinishBudget 2s"}},
		"too large for an envelope":       {func(c *contract.Settings) { c.MaxMessageBytes = 600_000 }, []string{"MaxMessageBytes 600000 is more than 520192"}},
		"raw, as large as SQS takes":      {func(c *contract.Settings) { c.Delivery, c.MaxMessageBytes = contract.Raw, contract.MaxQueueBodyBytes }, nil},
		"too small":                       {func(c *contract.Settings) { c.MaxMessageBytes = 100 }, []string{"MaxMessageBytes 100 is out of range"}},
		"auto, too large for an envelope": {func(c *contract.Settings) { c.Delivery, c.MaxMessageBytes = contract.Auto, 600_000 }, []string{"MaxMessageBytes 600000 is more than 520192"}},
		"eventbridge, the largest detail": {func(c *contract.Settings) {
			c.Delivery, c.MaxMessageBytes = contract.EventBridge, contract.MaxEventDetailBytes
		}, nil},
		"eventbridge, a detail too large for the queue": {func(c *contract.Settings) {
			c.Delivery, c.MaxMessageBytes = contract.EventBridge, contract.MaxEventDetailBytes+1
		},
			[]string{"MaxMessageBytes 1040385 is more than 1040384, the largest event detail that always fits the queue's 1 MiB body"}},
		"s3, as large as SQS takes": {func(c *contract.Settings) { c.Delivery, c.MaxMessageBytes = contract.S3, contract.MaxQueueBodyBytes }, nil},
		"s3, larger than SQS takes": {func(c *contract.Settings) { c.Delivery, c.MaxMessageBytes = contract.S3, contract.MaxQueueBodyBytes+1 }, []string{"is out of range"}},
		"unknown delivery":          {func(c *contract.Settings) { c.Delivery = "smoke" }, []string{`Delivery "smoke" is not one of`}},
		"unknown receive count":     {func(c *contract.Settings) { c.MaxReceiveCount = 0 }, nil},
		"too many receives":         {func(c *contract.Settings) { c.MaxReceiveCount = 1001 }, []string{"MaxReceiveCount 1001 is out of range"}},
		"no consumer":               {func(c *contract.Settings) { c.Consumer = "" }, []string{"Consumer is empty"}},
		"AWS's namespace":           {func(c *contract.Settings) { c.MetricsNamespace = "AWS/SQS" }, []string{`MetricsNamespace "AWS/SQS" starts with "AWS/"`, `for example "SQS"`}},
		"a leading colon":           {func(c *contract.Settings) { c.MetricsNamespace = ":Shop" }, []string{`starts with ':'`}},
		"not ASCII":                 {func(c *contract.Settings) { c.MetricsNamespace = "Café" }, []string{"other than printable ASCII"}},
		"a control character":       {func(c *contract.Settings) { c.MetricsNamespace = "Shop\n" }, []string{"other than printable ASCII"}},
		"longest namespace":         {func(c *contract.Settings) { c.MetricsNamespace = strings.Repeat("m", 255) }, nil},
		"too long":                  {func(c *contract.Settings) { c.MetricsNamespace = strings.Repeat("m", 256) }, []string{"MetricsNamespace of 256 characters is longer than CloudWatch's 255"}},
		"empty namespace":           {func(c *contract.Settings) { c.MetricsNamespace = "" }, []string{"MetricsNamespace is empty"}},
		"two at once":               {func(c *contract.Settings) { c.Consumer, c.Delivery = "", "x" }, []string{"Consumer is empty", `Delivery "x"`}},
	} {
		c := valid()
		tc.change(&c)
		got := strings.Join(c.Problems(), "\n")
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: %s", name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q; want %q", name, got, w)
			}
		}
	}
}
