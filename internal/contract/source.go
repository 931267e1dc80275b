package contract

import (
	"fmt"
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// sources are the sources of the library, in the order messages name them:
// each with its entry point (named in a refusal) and the rules of its
// settings (Problems). A new source is one row here, and its package.
var sources = []struct {
	source   Source
	entry    string
	problems func(Settings) []string
}{
	{SourceQueue, "sqsbatch.Start or StartTx, eventbridge.Start or s3event.Start", Settings.queueSourceProblems},
	{SourceKinesis, "kinesis.Start or StartTx", Settings.streamSourceProblems},
	{SourceDynamoDBStreams, "dynamodbstream.Start or StartTx", Settings.streamSourceProblems},
	{SourceHTTP, "endpoint.Start", Settings.httpProblems},
	{SourceStep, "step.Start", Settings.stepProblems},
}

// queueSourceProblems are a queue consumer's rules: the batch's and the
// queue's.
func (s Settings) queueSourceProblems() []string {
	return append(s.sharedProblems(), s.queueProblems()...)
}

// streamSourceProblems are a stream consumer's rules: the batch's and the
// stream's (a choice for REMOVE records on a DynamoDB stream).
func (s Settings) streamSourceProblems() []string {
	return append(s.sharedProblems(), s.streamProblems()...)
}

// sourceNames names the sources as a message or a document lists them:
// "queue, kinesis, dynamodb-streams or http".
func sourceNames() string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = string(s.source)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Images says which images of a DynamoDB stream record the handler hands
// the business function (Settings.StreamImages).
type Images string

// The images a DynamoDB stream consumer asks for.
const (
	// ImagesNew: the new image (and a REMOVE's old image, when the stream
	// carries it). The stream's view type must be NEW_IMAGE or
	// NEW_AND_OLD_IMAGES.
	ImagesNew Images = "new"
	// ImagesNewAndOld: the old image of a MODIFY too
	// (dynamodbstream.Config.OldImage). The stream's view type must be
	// NEW_AND_OLD_IMAGES.
	ImagesNewAndOld Images = "new-and-old"
)

// queueOnly are the entries that only a queue consumer reads: Encode leaves
// them out of a stream consumer's environment, and their rules (the message
// size for an SNS envelope, the redrive count) do not judge a stream
// consumer's settings.
var queueOnly = []string{MaxMessageBytesVar, DeliveryVar, FIFOVar, MaxReceiveCountVar, BackoffBaseVar, BackoffCapVar, BackoffFIFOCapVar}

// quietDefault marks an entry that Encode writes only when it is not the
// default, so that the templates of consumers that do not use it (every
// queue consumer, for the source and the stream settings) stay as they
// were. Its default depends on no other setting.
func quietDefault(f Field) Field {
	f.omitDefault = true
	return f
}

// skipped reports whether Encode leaves f out of s's environment.
func (f Field) skipped(s Settings) bool {
	if f.omitDefault && f.isDefault(s) {
		return true
	}
	return s.Source != SourceQueue && isQueueOnly(f.Var)
}

func isQueueOnly(name string) bool {
	for _, q := range queueOnly {
		if q == name {
			return true
		}
	}
	return false
}

// adapterProblems are the rules of the adapter that s's source runs: the
// queue adapter's for a queue, the stream adapter's for a stream (which
// needs a choice for REMOVE records on a DynamoDB stream). Settings that
// the source's adapter does not read are not judged.
func (s Settings) adapterProblems() []string {
	for _, src := range sources {
		if src.source == s.Source {
			return src.problems(s)
		}
	}
	return []string{fmt.Sprintf("Source %q is not a source of this library; give %s", s.Source, sourceNames())}
}

// ErrSource means a handler entry point was started under a contract of
// another source: a queue handler on a stream consumer's function, or the
// reverse.
var ErrSource = fmt.Errorf("contract source mismatch")

// CheckSource returns an error wrapping ErrSource, in one line that names
// the fix, unless s is a contract of the source want; entry names the
// handler's entry point ("kinesis.Start").
func (s Settings) CheckSource(want Source, entry string) error {
	if s.Source == want {
		return nil
	}
	return fmt.Errorf("%w: %s runs a %s consumer, but the function's contract is a %s consumer's (%s=%s): start the handler with the entry point of its source (%s), or deploy it with the construct of %s",
		ErrSource, entry, want, s.Source, SourceVar, s.Source, entryPoint(s.Source), want)
}

// entryPoint is the handler entry point of a source.
func entryPoint(s Source) string {
	for _, src := range sources {
		if src.source == s {
			return src.entry
		}
	}
	return "the entry point of source " + string(s)
}

// backoffProblems are the contract's rules of the backoff of failed records
// (the queue's own bounds are queueProblems'): a base that is
// not negative, and a retry horizon shorter than the business window, past
// which the age rule dead-letters the record as expired without running it.
// The horizon against the queue's retention is the construct's rule (it
// knows the retention and the visibility timeout).
func (s Settings) backoffProblems() []string {
	if s.BackoffBase < 0 {
		return []string{fmt.Sprintf("BackoffBase %s is negative; give 0 to turn the backoff off, or at least 1s (default %s)", Format(s.BackoffBase), Format(DefaultBackoffBase))}
	}
	b, capName := s.Backoff()
	if b.Base <= 0 || s.MaxReceiveCount <= 1 {
		return nil
	}
	h := b.Horizon(s.MaxReceiveCount)
	if limit := s.Window - limits.ClockSkewMargin; h >= limit {
		return []string{fmt.Sprintf("the retry horizon %s (the longest delays after receives 1 to %d of MaxReceiveCount %d: BackoffBase %s, doubled up to %s %s) is not shorter than Window %s less %s: a record that keeps failing would be judged expired on its later receives and dead-lettered without running; give a Window longer than %s, or a smaller BackoffCap, BackoffBase or MaxReceiveCount",
			Format(h), s.MaxReceiveCount-1, s.MaxReceiveCount, Format(b.Base), capName, Format(b.Cap), Format(s.Window), Format(limits.ClockSkewMargin), Format(h+limits.ClockSkewMargin))}
	}
	return nil
}

// Backoff is the schedule of s's failed records (its base is 0 when off),
// and the name of the cap it takes: BackoffFIFOCap on a FIFO queue, when
// shorter, else BackoffCap.
func (s Settings) Backoff() (b Backoff, capName string) {
	b, capName = Backoff{Base: s.BackoffBase, Cap: s.BackoffCap}, "BackoffCap"
	if s.FIFO && s.BackoffFIFOCap < b.Cap {
		b.Cap, capName = s.BackoffFIFOCap, "BackoffFIFOCap"
	}
	return b, capName
}
