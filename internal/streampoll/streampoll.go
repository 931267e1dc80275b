// Package streampoll is our own model of Lambda's event source for a stream
// (Kinesis, DynamoDB Streams), to drive a real stream handler on an
// emulator (kumo) in the emulator tests (test/kumo) and the local demo
// (demo/local). It is not Lambda's code: it models what the consumer's
// correctness depends on, from Lambda's documentation.
//
// What it models, per shard, one batch at a time (a parallelization factor
// of 1): a batch of at most BatchSize records from the shard's checkpoint
// (TRIM_HORIZON at first); on a complete success the checkpoint moves past
// the batch; on a partial batch response it moves to the lowest sequence
// number reported, compared as a number, and every record from there on is
// delivered again, those that had succeeded too ("If the batchItemFailures
// array contains multiple items, Lambda uses the record with the lowest
// sequence number as the checkpoint. Lambda then retries all records
// starting from that checkpoint."); an empty or unknown itemIdentifier, a
// function error or a timeout is a complete failure, and the batch is
// retried whole; a batch is retried at most MaxRetries times in a row.
// (https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
// and services-kinesis-batchfailurereporting.html.)
//
// What it leaves out: bisection on a function error (BisectBatchOnError:
// a failing batch is retried whole, not split in two), the maximum record
// age and the on-failure destination (a batch that exhausts MaxRetries is
// an error of Drain, not a record in the failure bucket), the batching
// window, a parallelization factor above 1, tumbling windows, resharding
// (a shard's split or merge and the parents-first rule: the simulation,
// test/chaos, models those), iterator expiry, throttling and the backoff
// between retries, and filter criteria. The checkpoint lives in memory, in
// the Poller.
package streampoll

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
)

// API calls an AWS JSON protocol service (Kinesis_20131202,
// DynamoDBStreams_20120810) at URL, unsigned: the emulator does not check
// signatures.
type API struct {
	URL, Target string
	// Client is the HTTP client. Default: http.DefaultClient.
	Client *http.Client
}

// Call sends op with in as its JSON body and decodes the answer into out
// (nil: ignored).
func (a API) Call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", a.Target+"."+op)
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", a.Target, op, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// Position is where a shard is read from: the start (the zero value,
// TRIM_HORIZON), at a sequence number, or after one.
type Position struct {
	Sequence string
	After    bool
}

// Stream is what the poller needs of a stream.
type Stream struct {
	// Shards are the stream's shards.
	Shards []string
	// Iterator returns a shard iterator at pos.
	Iterator func(ctx context.Context, shard string, pos Position) (string, error)
	// Read returns the records at iterator and the next iterator ("" at
	// the end of a closed shard).
	Read func(ctx context.Context, iterator string) (records []json.RawMessage, next string, err error)
	// Sequence is a record's sequence number.
	Sequence func(json.RawMessage) string
}

// Invoke hands a batch to the function and returns the item identifiers of
// its partial batch response (none: a complete success), or a function
// error (or a timeout).
type Invoke func(ctx context.Context, batch []json.RawMessage) (failures []string, err error)

// Poller reads each shard of Stream from its checkpoint and invokes the
// function. Its counts are for the caller's report; it is not safe for
// concurrent use.
type Poller struct {
	Stream Stream
	Invoke Invoke
	// BatchSize is the most records per batch. Default: 100 (Lambda's).
	BatchSize int
	// MaxRetries is how often a batch may be retried in a row before
	// Drain gives up with an error. Default: 10.
	MaxRetries int

	// Deliveries are the records handed to the function.
	Deliveries int
	// Replayed are the deliveries of a record delivered before: the
	// records after a failed one, handed over again from the checkpoint.
	Replayed int
	// PartialResponses are the batches answered with a partial batch
	// response: the shard resumed from the record reported.
	PartialResponses int
	// FunctionErrors are the batches that failed whole.
	FunctionErrors int
	// Records are the distinct records delivered.
	Records int

	checkpoint map[string]Position
	highest    map[string]*big.Int // the highest sequence number delivered, per shard
}

// ErrGaveUp is Drain's error when a batch failed more than MaxRetries times
// in a row: Lambda would send it to the on-failure destination, which the
// model leaves out.
var ErrGaveUp = errors.New("streampoll: a batch failed more often than the retries allow")

// Drain reads every shard from its checkpoint to its current end, invoking
// the function with each batch, and returns when no shard has a record
// past its checkpoint. A later Drain goes on from the checkpoints.
func (p *Poller) Drain(ctx context.Context) error {
	if p.checkpoint == nil {
		p.checkpoint, p.highest = map[string]Position{}, map[string]*big.Int{}
	}
	batchSize, maxRetries := p.BatchSize, p.MaxRetries
	if batchSize <= 0 {
		batchSize = 100
	}
	if maxRetries <= 0 {
		maxRetries = 10
	}
	for _, shard := range p.Stream.Shards {
		retries := 0
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			at := p.checkpoint[shard]
			recs, err := p.read(ctx, shard, at, batchSize)
			if err != nil {
				return fmt.Errorf("shard %s: %w", shard, err)
			}
			if len(recs) == 0 {
				break
			}
			p.count(shard, recs)
			failures, err := p.Invoke(ctx, recs)
			next, failed := p.outcome(recs, failures, err)
			switch {
			case failed:
				p.FunctionErrors++
				retries++
			case next.Sequence == "":
				retries = 0
				p.checkpoint[shard] = Position{Sequence: p.Stream.Sequence(recs[len(recs)-1]), After: true}
			default:
				p.PartialResponses++
				if next.Sequence == p.Stream.Sequence(recs[0]) {
					retries++ // the batch's first record failed: nothing moved
				} else {
					retries = 0
				}
				p.checkpoint[shard] = next
			}
			if retries > maxRetries {
				return fmt.Errorf("%w: shard %s at %+v, %d retries", ErrGaveUp, shard, p.checkpoint[shard], maxRetries)
			}
		}
	}
	return nil
}

// outcome reads the function's answer: the checkpoint it asks for (none on
// a complete success), or a complete failure.
func (p *Poller) outcome(batch []json.RawMessage, failures []string, err error) (Position, bool) {
	if err != nil {
		return Position{}, true
	}
	if len(failures) == 0 {
		return Position{}, false
	}
	in := map[string]bool{}
	for _, r := range batch {
		in[p.Stream.Sequence(r)] = true
	}
	var lowest string
	for _, id := range failures {
		if !in[id] { // empty, or not a record of the batch
			return Position{}, true
		}
		if lowest == "" || Less(id, lowest) {
			lowest = id
		}
	}
	return Position{Sequence: lowest}, false
}

// count adds a batch's deliveries and replays.
func (p *Poller) count(shard string, batch []json.RawMessage) {
	for _, r := range batch {
		p.Deliveries++
		n, ok := new(big.Int).SetString(p.Stream.Sequence(r), 10)
		if !ok {
			continue
		}
		if h := p.highest[shard]; h != nil && n.Cmp(h) <= 0 {
			p.Replayed++
			continue
		}
		p.Records++
		p.highest[shard] = n
	}
}

// read returns the next batch of shard from at. Records before at are
// skipped by sequence number: kumo's DynamoDB Streams iterators at or after
// a sequence number start at the shard's first record.
func (p *Poller) read(ctx context.Context, shard string, at Position, batchSize int) ([]json.RawMessage, error) {
	it, err := p.Stream.Iterator(ctx, shard, at)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for it != "" && len(out) < batchSize {
		recs, next, err := p.Stream.Read(ctx, it)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if !before(p.Stream.Sequence(r), at) && len(out) < batchSize {
				out = append(out, r)
			}
		}
		if len(recs) == 0 || next == it {
			break
		}
		it = next
	}
	if len(out) > 0 && at.Sequence != "" && !at.After && p.Stream.Sequence(out[0]) != at.Sequence {
		return nil, fmt.Errorf("a read at sequence number %s returned %s first", at.Sequence, p.Stream.Sequence(out[0]))
	}
	return out, nil
}

// before reports whether seq comes before pos.
func before(seq string, pos Position) bool {
	if pos.Sequence == "" {
		return false
	}
	if pos.After {
		return !Less(pos.Sequence, seq)
	}
	return Less(seq, pos.Sequence)
}

// Less reports whether sequence number a comes before b. Sequence numbers
// are decimal strings of different lengths: they compare as numbers, not
// as strings ("9" comes before "10").
func Less(a, b string) bool {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	if !okx || !oky {
		return len(a) < len(b) || (len(a) == len(b) && strings.Compare(a, b) < 0)
	}
	return x.Cmp(y) < 0
}
