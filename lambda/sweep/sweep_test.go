package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/dynalite"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/build"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sweep"
)

// fixture is a shared table of an app's own design (partition key PK, sort
// key SK, TTL attribute expiresAt) holding idempotency records, expired
// and live, and the app's own items, on a clock the test controls.
type fixture struct {
	client  *dynamodb.Client
	table   string
	store   *dynamostore.Store
	now     time.Time
	expired []string // record keys whose TTL is past
	live    []string // record keys whose TTL is not (or within the skew margin)
}

func newFixture(t *testing.T, srv *dynalite.Server, expired, live int) *fixture {
	t.Helper()
	f := &fixture{client: srv.Client(), table: srv.NewTableKeyed(t, "PK", "SK"), now: time.Now().Truncate(time.Second)}
	f.store = dynamostore.New(f.client, f.table, dynamostore.WithPartitionKey("PK"),
		dynamostore.WithSortKey("SK", func(string) string { return "IDEMPOTENCY" }), dynamostore.WithTTLAttribute("expiresAt"))
	for i := range expired {
		key := fmt.Sprintf("charge#expired-%d", i)
		f.put(t, key, i%2 == 0, f.now.Add(-time.Duration(i+2)*time.Second))
		f.expired = append(f.expired, key)
	}
	for i := range live {
		key := fmt.Sprintf("charge#live-%d", i)
		ttl := f.now.Add(time.Hour)
		if i == 0 {
			ttl = f.now.Add(-500 * time.Millisecond).Truncate(time.Second) // past, but within the skew margin
		}
		f.put(t, key, i%2 == 0, ttl)
		f.live = append(f.live, key)
	}
	// The app's own items, with an attribute of the TTL's name in the past:
	// an order, and one that even carries a record's status.
	for _, item := range []map[string]types.AttributeValue{
		{"PK": s("order#1"), "SK": s("DETAILS"), "expiresAt": n(f.now.Add(-time.Hour).Unix())},
		{"PK": s("order#2"), "SK": s("DETAILS"), "expiresAt": n(f.now.Add(-time.Hour).Unix()), "status": s("COMPLETED"), "owner": s("warehouse")},
	} {
		if _, err := f.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// put writes the record of key, completed or in progress (its lease long
// ended), whose TTL is ttl.
func (f *fixture) put(t *testing.T, key string, completed bool, ttl time.Time) {
	t.Helper()
	ctx := context.Background()
	rec := idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Owner: "owner-" + key, PayloadHash: "v2:x",
		LeaseUntil: ttl.Add(-2 * time.Hour), ExpiresAt: ttl.Add(-time.Hour), TTL: ttl}
	if err := f.store.Reserve(ctx, rec, f.now.Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if completed {
		rec.Status = idempotency.StatusCompleted
		if err := f.store.Complete(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
}

// check fails t unless the expired records are gone and the live records
// and the app's items are there.
func (f *fixture) check(t *testing.T, kept ...string) {
	t.Helper()
	for _, key := range f.expired {
		rec, err := f.store.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if (rec != nil) != contains(kept, key) {
			t.Errorf("expired record %s: %+v, want it deleted unless kept (%v)", key, rec, kept)
		}
	}
	for _, key := range f.live {
		if rec, err := f.store.Get(context.Background(), key); err != nil || rec == nil {
			t.Errorf("live record %s: %v, %v; want it kept", key, rec, err)
		}
	}
	for _, pk := range []string{"order#1", "order#2"} {
		out, err := f.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: map[string]types.AttributeValue{"PK": s(pk), "SK": s("DETAILS")}})
		if err != nil || len(out.Item) == 0 {
			t.Errorf("the app's item %s: %v; want it kept", pk, err)
		}
	}
}

func (f *fixture) sweeper(t *testing.T, api sweep.API, pageSize, maxPages int) *sweep.Sweeper {
	t.Helper()
	s, err := sweep.New(api, sweep.Config{Table: f.table, PartitionKey: "PK", SortKey: "SK", TTLAttribute: "expiresAt",
		PageSize: pageSize, MaxPages: maxPages, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSweepDeletesExpiredRecordsOnly: one run over a real server (dynalite)
// reads every segment, a few items a page, and deletes the idempotency
// records whose TTL is past; it keeps the live records, a record past its
// TTL by less than the skew margin, and the app's own items of the shared
// table, even one whose TTL attribute is past and that carries a status.
func TestSweepDeletesExpiredRecordsOnly(t *testing.T) {
	srv := dynalite.Start(t)
	f := newFixture(t, srv, 40, 6)
	sum, err := f.sweeper(t, f.client, 3, 0).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Next != nil || sum.Deleted != 40 || sum.Expired != 40 || sum.Scanned != 48 || sum.Pages < 16 {
		t.Fatalf("%+v; want a complete pass of 16 segments or more pages, 48 items scanned, 40 expired and deleted", sum)
	}
	f.check(t)
}

// TestSweepGoesOnFromWhereARunStopped: runs bounded to two pages each go on
// from the cursor the previous returned (as JSON, the way it travels in an
// event) until the pass completes; together they delete every expired
// record, once.
func TestSweepGoesOnFromWhereARunStopped(t *testing.T) {
	srv := dynalite.Start(t)
	f := newFixture(t, srv, 30, 4)
	s := f.sweeper(t, f.client, 4, 2)
	var from *sweep.Cursor
	deleted, runs := 0, 0
	for ; runs < 100; runs++ {
		sum, err := s.Run(context.Background(), from)
		if err != nil {
			t.Fatal(err)
		}
		deleted += sum.Deleted
		if sum.Complete {
			break
		}
		if sum.Pages != 2 || sum.Next == nil {
			t.Fatalf("run %d: %+v; want two pages and where to go on from", runs, sum)
		}
		b, err := json.Marshal(sum.Next)
		if err != nil {
			t.Fatal(err)
		}
		from = new(sweep.Cursor)
		if err := json.Unmarshal(b, from); err != nil {
			t.Fatal(err)
		}
	}
	if deleted != 30 || runs < 8 {
		t.Fatalf("%d runs deleted %d; want 30 over 8 runs or more (16 segments, two pages a run)", runs+1, deleted)
	}
	f.check(t)
}

// reReserving is the API of a sweeper between whose scan and delete the key
// of one record is reserved anew (a redelivery of its fact, the window past).
type reReserving struct {
	*dynamodb.Client
	f    *fixture
	t    *testing.T
	key  string
	once sync.Once
}

func (r *reReserving) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if pk, _ := in.Key["PK"].(*types.AttributeValueMemberS); pk != nil && pk.Value == r.key {
		r.once.Do(func() {
			rec := idempotency.Record{Key: r.key, Status: idempotency.StatusInProgress, Owner: "redelivery", PayloadHash: "v2:x",
				LeaseUntil: r.f.now.Add(time.Minute), ExpiresAt: r.f.now.Add(24 * time.Hour), TTL: r.f.now.Add(48 * time.Hour)}
			if err := r.f.store.Reserve(ctx, rec, r.f.now); err != nil {
				r.t.Errorf("reserve anew: %v", err)
			}
		})
	}
	return r.Client.DeleteItem(ctx, in, optFns...)
}

// TestSweepKeepsARecordReservedAfterTheScan: a record expired when scanned
// but reserved anew before its delete is kept (the delete's condition sees
// its new TTL) and counted as such; the others are deleted.
func TestSweepKeepsARecordReservedAfterTheScan(t *testing.T) {
	srv := dynalite.Start(t)
	f := newFixture(t, srv, 10, 2)
	api := &reReserving{Client: f.client, f: f, t: t, key: f.expired[3]}
	sum, err := f.sweeper(t, api, 0, 0).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Deleted != 9 || sum.Reserved != 1 || !sum.Complete {
		t.Fatalf("%+v; want 9 deleted and 1 kept, reserved anew", sum)
	}
	f.check(t, f.expired[3])
	if rec, _ := f.store.Get(context.Background(), f.expired[3]); rec == nil || rec.Owner != "redelivery" {
		t.Fatalf("record %+v; want the new reservation", rec)
	}
}

// TestSweepConfigNamesEveryMissingVariable: the sweeper reads the table's
// name, key and TTL attribute from the contract's variables and guesses
// none: each one missing is named, at once.
func TestSweepConfigNamesEveryMissingVariable(t *testing.T) {
	_, err := sweep.FromEnv(func(string) string { return "" })
	for _, v := range []string{contract.TableVar, contract.PartitionKeyVar, contract.TTLAttributeVar} {
		if err == nil || !strings.Contains(err.Error(), v+" is not set") {
			t.Errorf("err %v; want it to name %s", err, v)
		}
	}
	env := map[string]string{contract.TableVar: "orders", contract.PartitionKeyVar: "PK", contract.TTLAttributeVar: "status"}
	if _, err := sweep.FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "attribute of the idempotency record") {
		t.Errorf("err %v; want the TTL attribute named like a record's refused", err)
	}
	env[contract.TTLAttributeVar] = "expiresAt"
	cfg, err := sweep.FromEnv(func(k string) string { return env[k] })
	if err != nil || cfg.Table != "orders" || cfg.PartitionKey != "PK" || cfg.SortKey != "" || cfg.TTLAttribute != "expiresAt" {
		t.Fatalf("%+v, %v", cfg, err)
	}
}

// TestSweepLogsASummaryPerRun: the summary line, written by the logger the
// entry point builds, names the table and the Region (AWS_REGION) and counts
// what the run did.
func TestSweepLogsASummaryPerRun(t *testing.T) {
	var buf bytes.Buffer
	o := build.Resolve([]func(*build.Options){func(o *build.Options) {
		o.Getenv = func(k string) string { return map[string]string{"AWS_REGION": "eu-west-2"}[k] }
		o.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	}})
	sweep.LogRun(context.Background(), o.Logger, sweep.Config{Table: "orders"},
		sweep.Summary{Scanned: 10, Expired: 4, Deleted: 3, Reserved: 1, Pages: 2, Next: &sweep.Cursor{Segment: 5, Visited: 3}}, nil)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"msg": "sweep", "table": "orders", "region": "eu-west-2", "scanned": 10.0, "deleted": 3.0, "skipped_reserved": 1.0, "complete": false, "next_segment": 5.0} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v (line %s)", k, line[k], want, buf.String())
		}
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue  { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// TestASummaryIsTheNextRunsEvent: the handler goes on from a previous run's
// Summary passed as its event, and starts a new pass (from a random segment)
// on a schedule's event, which carries no cursor.
func TestASummaryIsTheNextRunsEvent(t *testing.T) {
	prev, err := json.Marshal(sweep.Summary{Pages: 2, Next: &sweep.Cursor{Segment: 7, Key: map[string]string{"pk": "charge#o-1"}, Visited: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := sweep.CursorOf(prev); err != nil || c == nil || c.Segment != 7 || c.Visited != 3 || c.Key["pk"] != "charge#o-1" {
		t.Errorf("from a Summary: %+v, %v; want its Next", c, err)
	}
	// A schedule's event, sent now (the sweeper reads no time from it).
	scheduled := []byte(`{"version":"0","id":"53dc4d37","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"` +
		time.Now().UTC().Format(time.RFC3339) + `","region":"eu-west-1","resources":[],"detail":{}}`)
	if c, err := sweep.CursorOf(scheduled); err != nil || c != nil {
		t.Errorf("from a schedule's event: %+v, %v; want no cursor (a new pass)", c, err)
	}
}
