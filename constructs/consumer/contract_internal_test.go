package consumer

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// TestTheHandlerRefusesWhatTheConstructRefuses: for props whose runtime
// settings break a rule, the construct's synth error and the handler's
// init error (decoding the environment the construct would have written)
// state the same rule in the same words.
func TestTheHandlerRefusesWhatTheConstructRefuses(t *testing.T) {
	for name, p := range map[string]*IdempotentConsumerProps{
		"window under the lease":      {Props: core.Props{Window: awscdk.Duration_Seconds(jsii.Number(10))}},
		"no time to start":            {MinRemaining: awscdk.Duration_Seconds(jsii.Number(1))},
		"no TTL after the window":     {Props: core.Props{TTLAfterWindow: awscdk.Duration_Seconds(jsii.Number(0))}},
		"a cache the handler refuses": {CacheSize: jsii.Number(50_000_000)},
		"too long a timeout":          {Props: core.Props{Timeout: awscdk.Duration_Minutes(jsii.Number(20))}},
	} {
		t.Run(name, func(t *testing.T) {
			p.Entry = jsii.String("unused")
			synthErr := p.Validate(jsii.String("C"))
			s, problems := p.compute("C")
			if len(problems) > 0 {
				t.Fatalf("props unreadable: %v", problems)
			}
			env := s.Runtime.Encode()
			_, initErr := contract.Decode(func(k string) string { return env[k] }, "")
			rules := s.Runtime.Problems()
			if synthErr == nil || initErr == nil || len(rules) == 0 {
				t.Fatalf("synth %v, init %v: want both to refuse", synthErr, initErr)
			}
			for _, rule := range rules {
				if !strings.Contains(synthErr.Error(), rule) || !strings.Contains(initErr.Error(), rule) {
					t.Errorf("rule %q is not in both errors:\nsynth: %v\ninit: %v", rule, synthErr, initErr)
				}
			}
		})
	}
}

// TestBigBatchesRunABoundedNumberOfRecordsAtOnce: a batch of thousands of
// records (with a batching window) runs DefaultMaxConcurrency records at
// once by default, not thousands.
func TestBigBatchesRunABoundedNumberOfRecordsAtOnce(t *testing.T) {
	p := &IdempotentConsumerProps{BatchSize: jsii.Number(5000), MaxBatchingWindow: awscdk.Duration_Seconds(jsii.Number(5))}
	s, problems := p.compute("C")
	if len(problems) > 0 || s.Runtime.BatchConcurrency != contract.DefaultMaxConcurrency {
		t.Fatalf("concurrency %d (%v), want %d", s.Runtime.BatchConcurrency, problems, contract.DefaultMaxConcurrency)
	}
}
