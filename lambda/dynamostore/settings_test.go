package dynamostore_test

import (
	"context"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// The entry points' tests' contract (contracttest).
var (
	settings = contracttest.Settings
)

// puts is a dynamostore.API that takes every PutItem and keeps its item.
type puts struct {
	dynamostore.API
	items []map[string]types.AttributeValue
}

func (p *puts) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	p.items = append(p.items, in.Item)
	return &dynamodb.PutItemOutput{}, nil
}

// TestNewStoreMapsTheDesign: each setting of the table's design, read from
// the environment (FromEnv), reaches the store: the item the store writes for a
// record has its key in the attributes the design names, the other key
// holding the fixed value, and the TTL in the design's TTL attribute. Each
// variable alone changes the item, so a setting dropped or swapped in the
// mapping fails here.
func TestNewStoreMapsTheDesign(t *testing.T) {
	const key = "charge#order-42"
	for _, tc := range []struct {
		name string
		env  map[string]string
		keys map[string]string // the item's key attributes and their values
		ttl  string
	}{
		{"the construct's table", nil, map[string]string{"pk": key}, "ttl"},
		{"its own partition key", map[string]string{contract.PartitionKeyVar: "PK"}, map[string]string{"PK": key}, "ttl"},
		{"a sort key with a fixed value", map[string]string{contract.SortKeyVar: "SK", contract.FixedKeyValueVar: "IDEMPOTENCY"},
			map[string]string{"pk": key, "SK": "IDEMPOTENCY"}, "ttl"},
		{"the record key in the sort key", map[string]string{contract.SortKeyVar: "SK", contract.FixedKeyValueVar: "idempotency#charge", contract.RecordKeyInVar: "sort"},
			map[string]string{"pk": "idempotency#charge", "SK": key}, "ttl"},
		{"its own TTL attribute", map[string]string{contract.TTLAttributeVar: "expiry"}, map[string]string{"pk": key}, "expiry"},
		{"all of it", map[string]string{contract.PartitionKeyVar: "PK", contract.SortKeyVar: "SK", contract.FixedKeyValueVar: "IDEMPOTENCY", contract.RecordKeyInVar: "sort", contract.TTLAttributeVar: "expiry"},
			map[string]string{"PK": "IDEMPOTENCY", "SK": key}, "expiry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := settings().Encode()
			maps.Copy(env, tc.env)
			api := &puts{}
			store, err := dynamostore.FromEnv(api, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			rec := idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Owner: "o", LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour), TTL: now.Add(2 * time.Hour), PayloadHash: "v2:h"}
			if err := store.Reserve(context.Background(), rec, now); err != nil {
				t.Fatal(err)
			}
			item := api.items[0]
			for name, want := range tc.keys {
				if got, ok := item[name].(*types.AttributeValueMemberS); !ok || got.Value != want {
					t.Errorf("the item's %s is %#v, want %q", name, item[name], want)
				}
			}
			if got := store.KeyAttributes(); !slices.Equal(sorted(got), sorted(slices.Collect(maps.Keys(tc.keys)))) {
				t.Errorf("KeyAttributes() = %v, want the keys of %v", got, tc.keys)
			}
			for name := range store.ItemKey(key) {
				if _, ok := tc.keys[name]; !ok {
					t.Errorf("ItemKey(%q) has %s, not a key of %v", key, name, tc.keys)
				}
			}
			for _, ttl := range []string{"ttl", "expiry"} {
				if _, has := item[ttl]; has != (ttl == tc.ttl) {
					t.Errorf("the item has %s: %t; want the TTL in %s alone: %v", ttl, has, tc.ttl, item)
				}
			}
		})
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestFromEnvNeedsATableAndNamesTheVariable: FromEnv refuses an
// environment without a table, and a design the contract refuses, naming
// the variable; the table alone is the constructs' design.
func TestFromEnvNeedsATableAndNamesTheVariable(t *testing.T) {
	if _, err := dynamostore.FromEnv(&puts{}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), contract.TableVar) {
		t.Errorf("no table: %v; want an error that names %s", err, contract.TableVar)
	}
	env := map[string]string{contract.TableVar: "t", contract.PartitionKeyVar: "status"}
	if _, err := dynamostore.FromEnv(&puts{}, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), contract.PartitionKeyVar) {
		t.Errorf("a taken partition key: %v; want an error that names %s", err, contract.PartitionKeyVar)
	}
	env = map[string]string{contract.TableVar: "t"}
	if store, err := dynamostore.FromEnv(&puts{}, func(k string) string { return env[k] }); err != nil || !slices.Equal(store.KeyAttributes(), []string{"pk"}) {
		t.Errorf("the table alone: %v, %v; want the constructs' design", store, err)
	}
}

// TestNewStoreNamesTheVariables: a design the store cannot use (settings
// that did not come through contract.Decode, which refuses it already) is
// an error that names the design's variables.
func TestNewStoreNamesTheVariables(t *testing.T) {
	s := settings()
	s.TablePartitionKey = "status"
	_, err := dynamostore.FromSettings(&puts{}, s)
	if err == nil || !strings.Contains(err.Error(), contract.PartitionKeyVar+`="status"`) || !strings.Contains(err.Error(), `partition key "status" is an attribute of the record`) {
		t.Fatalf("err %v; want one that names %s and the store's reason", err, contract.PartitionKeyVar)
	}
	s = settings()
	s.TableSortKey = "sk"
	if _, err := dynamostore.FromSettings(&puts{}, s); err == nil || !strings.Contains(err.Error(), contract.FixedKeyValueVar) {
		t.Fatalf("a sort key without a value: %v", err)
	}
}

// TestTheContractRefusesTheDesignsTheStoreCannotUse: the contract's rules
// of the table's design (at synth and at init) and the store's own check
// (Store.Err) agree on the names: each refuses exactly the designs the
// other refuses, so the construct never deploys a design the store would
// refuse, nor refuses one it can use.
func TestTheContractRefusesTheDesignsTheStoreCannotUse(t *testing.T) {
	names := []string{"pk", "PK", "SK", "ttl", "expiresAt", "status", "owner", "lease_until", "expires_at", "payload_hash", "result", "layout"}
	for _, pk := range names {
		for _, sk := range append([]string{""}, names...) {
			for _, ttl := range names {
				for _, in := range []contract.KeyPlace{contract.KeyInPartition, contract.KeyInSort} {
					if sk == "" && in == contract.KeyInSort {
						continue
					}
					s := settings()
					s.TablePartitionKey, s.TableSortKey, s.TableTTLAttribute, s.TableRecordKeyIn = pk, sk, ttl, in
					if sk != "" {
						s.TableFixedKeyValue = "v"
					}
					refused := len(s.Problems()) > 0
					_, err := dynamostore.FromSettings(&puts{}, s)
					if refused != (err != nil) {
						t.Errorf("partition key %q, sort key %q, TTL %q, record key in %s: the contract refuses it: %t (%q), the store: %v", pk, sk, ttl, in, refused, s.Problems(), err)
					}
				}
			}
		}
	}
}
