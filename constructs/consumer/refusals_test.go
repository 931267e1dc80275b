package consumer_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/contract"
)

func days(n float64) awscdk.Duration    { return awscdk.Duration_Days(jsii.Number(n)) }
func minutes(n float64) awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(n)) }

// appOrders is a queue of the app with a dead-letter queue, valid for a
// consumer of the default Timeout but for what change sets.
func appOrders(stack awscdk.Stack, change func(q, dlq *awssqs.QueueProps)) awssqs.Queue {
	dlqProps := &awssqs.QueueProps{RetentionPeriod: days(14)}
	props := &awssqs.QueueProps{VisibilityTimeout: minutes(3), MaxMessageSizeBytes: jsii.Number(1048576)}
	if change != nil {
		change(props, dlqProps)
	}
	if props.Fifo != nil && *props.Fifo {
		dlqProps.Fifo = jsii.Bool(true)
	}
	props.DeadLetterQueue = &awssqs.DeadLetterQueue{Queue: awssqs.NewQueue(stack, jsii.String("OrdersDLQ"), dlqProps), MaxReceiveCount: jsii.Number(5)}
	return awssqs.NewQueue(stack, jsii.String("Orders"), props)
}

func layer(stack awscdk.Stack, archs ...awslambda.Architecture) awslambda.ILayerVersion {
	return awslambda.NewLayerVersion(stack, jsii.String("Agent"), &awslambda.LayerVersionProps{
		Code:                    awslambda.Code_FromAsset(jsii.String(handlerDir), nil),
		CompatibleArchitectures: &archs,
	})
}

func tableWithTTL(stack awscdk.Stack, attr string) awsdynamodb.ITable {
	return awsdynamodb.NewTable(stack, jsii.String("Shop"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		TimeToLiveAttribute: jsii.String(attr),
	})
}

// TestRefusedSettingsThatLoseMessages holds one row per rule of issue 18's
// table (and the shared table's TTL): the failing case refused with the
// construct's message, value, rule and fix, and its passing neighbour.
// Before, every failing case was accepted (LogLevel: a raw jsii panic).
func TestRefusedSettingsThatLoseMessages(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bad, good func(stack awscdk.Stack, p *consumer.IdempotentConsumerProps)
		want      []string
	}{{
		name: "a given queue smaller than what the topic delivers",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Queue = appOrders(s, func(q, _ *awssqs.QueueProps) { q.MaxMessageSizeBytes = jsii.Number(262144) })
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) { p.Queue = appOrders(s, nil) },
		want: []string{"Queue S/Orders takes messages of up to 262144 bytes (its MaximumMessageSize), less than the largest body the subscription delivers, 532480 bytes", "set the queue's MaxMessageSizeBytes to 1048576"},
	}, {
		name: "a given queue smaller than a raw topic's largest message",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.RawMessageDelivery = jsii.Bool(true)
			p.Queue = appOrders(s, func(q, _ *awssqs.QueueProps) { q.MaxMessageSizeBytes = jsii.Number(262143) })
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.RawMessageDelivery = jsii.Bool(true)
			p.Queue = appOrders(s, func(q, _ *awssqs.QueueProps) { q.MaxMessageSizeBytes = jsii.Number(262144) })
		},
		want: []string{"takes messages of up to 262143 bytes", "delivers, 262144 bytes"},
	}, {
		name: "DeadLetterQueueProps keeping messages no longer than the queue",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: days(4)}
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: days(5)}
		},
		want: []string{"the dead-letter queue's retention 96h (4 days) (DeadLetterQueueProps.RetentionPeriod) is not longer than the queue's 96h (4 days) (SQS's default: QueueProps.RetentionPeriod is nil)", "original enqueue time"},
	}, {
		name: "a given DeadLetterQueue on SQS's default retention",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueue = awssqs.NewQueue(s, jsii.String("DLQ"), nil)
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueue = awssqs.NewQueue(s, jsii.String("DLQ"), &awssqs.QueueProps{RetentionPeriod: days(14)})
		},
		want: []string{"the dead-letter queue's retention 96h (4 days) (the retention period of DeadLetterQueue S/DLQ (SQS's default))"},
	}, {
		name: "a given queue's dead-letter queue no longer than the queue",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Queue = appOrders(s, func(q, dlq *awssqs.QueueProps) { q.RetentionPeriod, dlq.RetentionPeriod = days(7), days(7) })
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Queue = appOrders(s, func(q, dlq *awssqs.QueueProps) { q.RetentionPeriod, dlq.RetentionPeriod = days(7), days(8) })
		},
		want: []string{"retention 168h (7 days) (the retention period of Queue's dead-letter queue S/OrdersDLQ) is not longer than the queue's 168h (7 days) (the retention period of Queue S/Orders)"},
	}, {
		name: "DeadLetterQueueProps keeping messages longer than SQS does",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: days(15)}
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.DeadLetterQueueProps = &awssqs.QueueProps{RetentionPeriod: days(14)}
		},
		want: []string{`IdempotentConsumer "C": invalid props`, "DeadLetterQueueProps.RetentionPeriod 360h (15 days) is out of range: SQS keeps a message from 1m to 336h (14 days); give a retention in that range"},
	}, {
		name: "QueueProps.RetentionPeriod shorter than MaxReceiveCount × visibility",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.QueueProps = &awssqs.QueueProps{RetentionPeriod: minutes(10)}
			p.BackoffBase = minutes(0) // the rule without the backoff (its own: TestRuntimeRulesRefuse)
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.QueueProps = &awssqs.QueueProps{RetentionPeriod: minutes(16)}
			p.BackoffBase = minutes(0)
		},
		want: []string{"the queue's retention 10m (QueueProps.RetentionPeriod) is not longer than MaxReceiveCount × the visibility timeout (5 × 3m = 15m)", "give the queue a retention longer than 15m"},
	}, {
		name: "LogLevel that is not Lambda's",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.LogLevel = awslambda.ApplicationLogLevel("VERBOSE")
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.LogLevel = awslambda.ApplicationLogLevel_WARN
		},
		want: []string{`IdempotentConsumer "C": invalid props`, `LogLevel "VERBOSE" is not one of Lambda's application log levels (TRACE, DEBUG, INFO, WARN, ERROR, FATAL)`},
	}, {
		name: "a layer built for another architecture",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Layers = &[]awslambda.ILayerVersion{layer(s, awslambda.Architecture_X86_64())}
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Layers = &[]awslambda.ILayerVersion{layer(s, awslambda.Architecture_X86_64(), awslambda.Architecture_ARM_64())}
		},
		want: []string{"Layers holds S/Agent, declared for x86_64 (its compatibleArchitectures), but the function is arm64"},
	}, {
		name: "a shared table whose TTL is on another attribute than TableTTLAttribute",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace, p.TableTTLAttribute = tableWithTTL(s, "expiresAt"), jsii.String("reserve"), jsii.String(contract.TTLAttribute)
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = tableWithTTL(s, "expiresAt"), jsii.String("reserve")
		},
		want: []string{`Table S/Shop has its TTL on the attribute "expiresAt", but TableTTLAttribute is "ttl"`},
	}, {
		name: "a FIFO topic with a standard queue",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.FifoTopic, p.Queue = jsii.Bool(true), appOrders(s, nil)
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.FifoTopic, p.StandardQueue, p.Queue = jsii.Bool(true), jsii.Bool(true), appOrders(s, nil)
		},
		want: []string{"Queue is a standard queue, but the topic is FIFO", "give a FIFO queue; or, to consume the FIFO topic with standard queues, set StandardQueue to true"},
	}, {
		name: "QueueProps.Fifo false under a FIFO topic",
		bad: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.FifoTopic, p.QueueProps = jsii.Bool(true), &awssqs.QueueProps{Fifo: jsii.Bool(false)}
		},
		good: func(s awscdk.Stack, p *consumer.IdempotentConsumerProps) {
			p.FifoTopic, p.QueueProps = jsii.Bool(true), &awssqs.QueueProps{Fifo: jsii.Bool(true)}
		},
		want: []string{"QueueProps.Fifo is false", "set StandardQueue to true"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			validate := func(change func(awscdk.Stack, *consumer.IdempotentConsumerProps)) (err error) {
				cdktest.Must(t, func() {
					stack := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("S"), nil)
					p := validProps()
					change(stack, p)
					err = p.Validate(jsii.String("C"))
				})
				return err
			}
			err := validate(tc.bad)
			if err == nil {
				t.Fatal("accepted")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 2 {
				t.Errorf("%d problems, want 1:\n%v", len(lines)-1, err)
			}
			t.Log(lines[len(lines)-1])
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal does not say %q:\n%v", w, err)
				}
			}
			if err := validate(tc.good); err != nil {
				t.Errorf("neighbour refused: %v", err)
			}
		})
	}
}

// TestLogLevelIsRefusedBeforeJsii: NewIdempotentConsumer's panic is the
// construct's message, not jsii's deserialization error.
func TestLogLevelIsRefusedBeforeJsii(t *testing.T) {
	msg, panicked := cdktest.Panics(func() {
		stack := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("S"), nil)
		p := validProps()
		p.LogLevel = awslambda.ApplicationLogLevel("VERBOSE")
		consumer.NewIdempotentConsumer(stack, jsii.String("C"), p)
	})
	if !panicked || !strings.HasPrefix(msg, `IdempotentConsumer "C": invalid props`) || strings.Contains(msg, "jsii") {
		t.Fatalf("panicked %t: %s", panicked, msg)
	}
}

// TestWarningsWhereTheValueCannotBeRead: what the construct cannot read at
// synth (an imported queue, layer or table) is a warning that states the
// rule; a Window shorter than the queue's retention is warned about; the
// defaults warn about nothing.
func TestWarningsWhereTheValueCannotBeRead(t *testing.T) {
	var annotations assertions.Annotations
	cdktest.Must(t, func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, "Warnings"))
		if err != nil {
			panic(err)
		}
		stack := awscdk.NewStack(app, jsii.String("W"), nil)
		topic := awssns.NewTopic(stack, jsii.String("Orders"), nil)
		add := func(id string, change func(p *consumer.IdempotentConsumerProps)) {
			p := validProps()
			p.Topic = topic
			if change != nil {
				change(p)
			}
			consumer.NewIdempotentConsumer(stack, jsii.String(id), p)
		}
		add("Defaults", nil)
		add("ShortWindow", func(p *consumer.IdempotentConsumerProps) {
			// A backoff whose horizon (2m + 4m + 8m + 10m) fits the hour.
			p.Window, p.BackoffBase, p.BackoffCap = awscdk.Duration_Hours(jsii.Number(1)), awscdk.Duration_Minutes(jsii.Number(2)), awscdk.Duration_Minutes(jsii.Number(10))
		})
		add("LongWindow", func(p *consumer.IdempotentConsumerProps) { p.Window = days(4) })
		add("ImportedLayer", func(p *consumer.IdempotentConsumerProps) {
			p.Layers = &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(stack, jsii.String("Otel"), jsii.String("arn:aws:lambda:eu-west-1:901920570463:layer:aws-otel-collector-amd64-ver-0-102-1:1"))}
		})
		add("ImportedTable", func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = awsdynamodb.Table_FromTableName(stack, jsii.String("Shop"), jsii.String("shop")), jsii.String("imported")
		})
		add("TableWithoutTTL", func(p *consumer.IdempotentConsumerProps) {
			p.Table, p.Namespace = awsdynamodb.NewTable(stack, jsii.String("Plain"), &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
			}), jsii.String("plain")
		})
		add("ImportedQueue", func(p *consumer.IdempotentConsumerProps) {
			p.Queue = awssqs.Queue_FromQueueArn(stack, jsii.String("Legacy"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:legacy"))
			p.DeadLetterQueue = awssqs.Queue_FromQueueArn(stack, jsii.String("LegacyDLQ"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:legacy-dlq"))
			p.VisibilityTimeout = minutes(3)
		})
		add("QueueWithoutSize", func(p *consumer.IdempotentConsumerProps) {
			dlq := awssqs.NewQueue(stack, jsii.String("SizeDLQ"), &awssqs.QueueProps{RetentionPeriod: days(14)})
			p.Queue = awssqs.NewQueue(stack, jsii.String("Size"), &awssqs.QueueProps{
				VisibilityTimeout: minutes(3),
				DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)},
			})
		})
		add("ImportedDeadLetterQueue", func(p *consumer.IdempotentConsumerProps) {
			dlq := awssqs.Queue_FromQueueArn(stack, jsii.String("SharedDLQ"), jsii.String("arn:aws:sqs:eu-west-1:123456789012:shared-dlq"))
			p.Queue = awssqs.NewQueue(stack, jsii.String("Mine"), &awssqs.QueueProps{
				VisibilityTimeout:   minutes(3),
				MaxMessageSizeBytes: jsii.Number(1048576),
				DeadLetterQueue:     &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)},
			})
		})
		annotations = assertions.Annotations_FromStack(stack)
	})
	ours := func(path string) []string {
		var got []string
		cdktest.Must(t, func() {
			for _, m := range *annotations.FindWarning(jsii.String(path), assertions.Match_StringLikeRegexp(jsii.String("idempotent-consumer:"))) {
				//lint:ignore SA1019 the assertions API returns this type; there is no other.
				got = append(got, fmt.Sprint(m.Entry.Data))
			}
		})
		return got
	}
	for _, tc := range []struct {
		path string
		want []string // what the warnings say, nil for none
	}{
		{"/W/Defaults", nil},
		{"/W/LongWindow", nil},
		{"/W/ShortWindow", []string{"Window 1h is shorter than the queue's retention 96h (4 days) (SQS's default: QueueProps.RetentionPeriod is nil)"}},
		{"/W/ImportedLayer", []string{"Layers holds the imported layer arn:aws:lambda:eu-west-1:901920570463:layer:aws-otel-collector-amd64-ver-0-102-1:1, whose compatible architectures the construct cannot read at synth; it must be built for arm64"}},
		{"/W/ImportedTable", []string{"Table W/Shop is imported, so the construct cannot read its TTL at synth",
			"Table W/Shop is imported, so the construct cannot read its key schema at synth: the handler will write items of the key schema [HASH pk (S)]"}},
		{"/W/TableWithoutTTL", []string{"Table W/Plain has no TTL"}},
		{"/W/ImportedQueue", []string{"Queue W/Legacy is imported, so the construct cannot check at synth", "its MaximumMessageSize must be at least 532480 bytes", "its retention must be longer than its maxReceiveCount × its visibility timeout (3m)", "the dead-letter queue's retention must be longer than the queue's"}},
		{"/W/QueueWithoutSize", []string{"Queue W/Size sets no MaximumMessageSize"}},
		{"/W/ImportedDeadLetterQueue", []string{"DeadLetterQueue W/SharedDLQ is imported", "the dead-letter queue's retention must be longer than the queue's"}},
	} {
		got := ours(tc.path)
		if tc.want == nil {
			if len(got) > 0 {
				t.Errorf("%s: warnings %q, want none", tc.path, got)
			}
			continue
		}
		// An imported table is two warnings: its TTL, and the key schema
		// the handler will write.
		if want := map[bool]int{true: 2, false: 1}[tc.path == "/W/ImportedTable"]; len(got) != want {
			t.Errorf("%s: warnings %q, want %d", tc.path, got, want)
			continue
		}
		t.Logf("%s: %s", tc.path, got)
		for _, w := range tc.want {
			if all := strings.Join(got, "\n"); !strings.Contains(all, w) {
				t.Errorf("%s: warnings %q\ndo not say %q", tc.path, all, w)
			}
		}
	}
}
