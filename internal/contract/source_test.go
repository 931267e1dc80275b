package contract_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

func streamSettings(src contract.Source) contract.Settings {
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	s.Source = src
	s.StreamRemoves = contract.RemoveRun
	return s
}

// TestAQueueConsumerWritesNoSource: the default source is the queue, and a
// queue consumer's environment says nothing of sources or streams, so that
// existing templates do not change.
func TestAQueueConsumerWritesNoSource(t *testing.T) {
	s := contract.Defaults(time.Minute)
	s.Table, s.Namespace, s.Consumer = "t", "ns", "c"
	if s.Source != contract.SourceQueue || s.StreamImages != contract.ImagesNew || s.StreamRemoves != "" {
		t.Fatalf("defaults: %q %q %q", s.Source, s.StreamImages, s.StreamRemoves)
	}
	env := s.Encode()
	for _, v := range []string{contract.SourceVar, contract.StreamImagesVar, contract.StreamRemovesVar} {
		if got, ok := env[v]; ok {
			t.Errorf("a queue consumer writes %s=%q", v, got)
		}
	}
	if env[contract.DeliveryVar] == "" || env[contract.MaxReceiveCountVar] == "" {
		t.Errorf("a queue consumer's settings are missing: %v", env)
	}
}

// TestAStreamConsumerWritesNoQueueSettings: a stream consumer's environment
// names its source and stream settings, and none of a queue's; its queue
// settings are not judged.
func TestAStreamConsumerWritesNoQueueSettings(t *testing.T) {
	s := streamSettings(contract.SourceDynamoDBStreams)
	s.StreamImages = contract.ImagesNewAndOld
	s.MaxMessageBytes = 1 // a queue rule would refuse it; a stream reads no message size
	if err := s.Validate(); err != nil {
		t.Fatalf("a stream consumer judged by a queue rule: %v", err)
	}
	env := s.Encode()
	if env[contract.SourceVar] != "dynamodb-streams" || env[contract.StreamImagesVar] != "new-and-old" || env[contract.StreamRemovesVar] != "run" {
		t.Errorf("stream settings not written: %v", env)
	}
	for _, v := range []string{contract.MaxMessageBytesVar, contract.DeliveryVar, contract.FIFOVar, contract.MaxReceiveCountVar} {
		if got, ok := env[v]; ok {
			t.Errorf("a stream consumer writes %s=%q", v, got)
		}
	}
	got, err := contract.Decode(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != s.Source || got.StreamImages != s.StreamImages || got.StreamRemoves != s.StreamRemoves {
		t.Errorf("round trip: %+v", got)
	}
}

// TestStreamRules: a DynamoDB stream consumer must choose what REMOVE
// records do; unknown values are refused by name; the init error names the
// variable.
func TestStreamRules(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{contract.SourceVar: "dynamodb-streams"}, "STREAM_REMOVES: StreamRemoves is not set"},
		{map[string]string{contract.SourceVar: "dynamodb-streams", contract.StreamRemovesVar: "ignore"}, `STREAM_REMOVES: StreamRemoves "ignore" is not one of "run", "skip" or "skip-expired"`},
		{map[string]string{contract.SourceVar: "kinesis", contract.StreamImagesVar: "old"}, `STREAM_IMAGES: StreamImages "old" is not one of "new" or "new-and-old"`},
		{map[string]string{contract.SourceVar: "sqs"}, `CONSUMER_SOURCE: Source "sqs" is not a source of this library`},
	} {
		env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c"}
		for k, v := range c.env {
			env[k] = v
		}
		_, err := contract.Decode(func(k string) string { return env[k] }, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%v) = %v, want %q", c.env, err, c.want)
		}
	}
	if err := streamSettings(contract.SourceKinesis).Validate(); err != nil {
		t.Errorf("a Kinesis consumer: %v", err)
	}
	for _, r := range []contract.Removes{contract.RemoveRun, contract.RemoveSkip, contract.RemoveSkipExpired} {
		env := map[string]string{contract.TableVar: "t", contract.NamespaceVar: "ns", contract.ConsumerVar: "c",
			contract.SourceVar: "dynamodb-streams", contract.StreamRemovesVar: string(r)}
		s, err := contract.Decode(func(k string) string { return env[k] }, "")
		if err != nil || s.StreamRemoves != r {
			t.Errorf("STREAM_REMOVES=%s: %v, %q", r, err, s.StreamRemoves)
		}
	}
}

func TestCheckSource(t *testing.T) {
	s := streamSettings(contract.SourceKinesis)
	if err := s.CheckSource(contract.SourceKinesis, "kinesis.Start"); err != nil {
		t.Fatal(err)
	}
	err := s.CheckSource(contract.SourceQueue, "sqsbatch.Start")
	if !errors.Is(err, contract.ErrSource) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "CONSUMER_SOURCE=kinesis") || !strings.Contains(err.Error(), "kinesis.Start") {
		t.Errorf("CheckSource: %v; want one line naming the variable and the fix", err)
	}
}
