package apptest_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	pub "github.com/idempotent-consumer/idempotent-consumer/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/guardconfig"
	"github.com/idempotent-consumer/idempotent-consumer/internal/iamcond"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamostore"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
)

// designed is a consumer of the designs stack: the table it shares, the
// settings its handler decodes from its function's environment, and the
// condition of its role's item actions on the table.
type designed struct {
	table     string
	settings  contract.Settings
	condition map[string]any
}

// TestLeadingKeysMatchEveryKeyTheHandlerWritesInEachDesign: for a consumer
// on a table of each design (the construct's own; a sort key holding the
// namespace or a fixed value; the record key in the sort key under a
// partition of the consumer's own, or under one that two consumers share),
// the condition the construct puts on its role matches, with IAM's
// semantics, the partition key of every item the handler writes: the
// settings are what the handler decodes from the function's environment in
// the template, the store is dynamostore.FromEnv's, the keys the guard's own
// (hashed or not), and the partition key is the store's own ItemKey. No
// other consumer's item matches, but where two consumers share a partition
// value (the limit of that design, which the construct warns of): there
// each matches the other's.
func TestLeadingKeysMatchEveryKeyTheHandlerWritesInEachDesign(t *testing.T) {
	consumers := map[string]*designed{}
	var template map[string]any
	var stack awscdk.Stack
	var built map[string]consumer.IdempotentConsumer
	msg, panicked := cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(fixtures.OutRoot, "Designs"))
		if err != nil {
			panic(err)
		}
		stack = awscdk.NewStack(app, jsii.String("Designs"), nil)
		str := func(name string) *awsdynamodb.Attribute {
			return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
		}
		single := awsdynamodb.NewTableV2(stack, jsii.String("Single"), &awsdynamodb.TablePropsV2{PartitionKey: str("PK"), SortKey: str("SK"), TimeToLiveAttribute: jsii.String("expiresAt")})
		peer := awsdynamodb.NewTable(stack, jsii.String("Peer"), &awsdynamodb.TableProps{PartitionKey: str("id"), SortKey: str("sk"), TimeToLiveAttribute: jsii.String("ttl")})
		built = map[string]consumer.IdempotentConsumer{}
		add := func(id, table string, props *consumer.IdempotentConsumerProps) {
			props.Entry = jsii.String(fixtures.Entry)
			built[id] = consumer.NewIdempotentConsumer(stack, jsii.String(id), props)
			consumers[id] = &designed{table: table}
		}
		add("Own", "own", &consumer.IdempotentConsumerProps{Props: core.Props{Namespace: jsii.String("own")}})
		add("OwnHashed", "ownhashed", &consumer.IdempotentConsumerProps{Props: core.Props{Namespace: jsii.String("own"), HashKeys: jsii.Bool(true)}})
		add("Reserve", "single", &consumer.IdempotentConsumerProps{Props: core.Props{Table: single, Namespace: jsii.String("reserve")}})
		add("Res", "single", &consumer.IdempotentConsumerProps{Props: core.Props{Table: single, Namespace: jsii.String("res"), TableFixedKeyValue: jsii.String("IDEMPOTENCY"), HashKeys: jsii.Bool(true)}})
		add("Email", "peer", &consumer.IdempotentConsumerProps{Props: core.Props{Table: peer, Namespace: jsii.String("email"), TableKeyInSortKey: jsii.Bool(true)}})
		add("EmailCustomer", "peer", &consumer.IdempotentConsumerProps{Props: core.Props{Table: peer, Namespace: jsii.String("email-customer"), TableKeyInSortKey: jsii.Bool(true), HashKeys: jsii.Bool(true)}})
		add("SharedA", "peer", &consumer.IdempotentConsumerProps{Props: core.Props{Table: peer, Namespace: jsii.String("a"), TableKeyInSortKey: jsii.Bool(true), TableFixedKeyValue: jsii.String("shared$")}})
		add("SharedB", "peer", &consumer.IdempotentConsumerProps{Props: core.Props{Table: peer, Namespace: jsii.String("a$b"), TableKeyInSortKey: jsii.Bool(true), TableFixedKeyValue: jsii.String("shared$")}})
		template = *assertions.Template_FromStack(stack, nil).ToJSON()
	})
	if panicked {
		t.Fatal(msg)
	}
	resources := template["Resources"].(map[string]any)
	for id, c := range built {
		d := consumers[id]
		fn := resources[*stack.GetLogicalId(c.Function().Node().DefaultChild().(awscdk.CfnElement))].(map[string]any)
		vars := fn["Properties"].(map[string]any)["Environment"].(map[string]any)["Variables"].(map[string]any)
		s, err := contract.Decode(func(k string) string {
			switch v := vars[k].(type) {
			case string:
				return v
			case nil:
				return ""
			}
			switch k { // tokens: the table's name, the key secret's dynamic reference
			case contract.TableVar:
				return d.table
			case contract.KeySecretVar:
				return strings.Repeat("s", limits.MinKeySecretBytes)
			}
			t.Fatalf("%s: %s is %v", id, k, vars[k])
			return ""
		}, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		d.settings = s
		role := *stack.GetLogicalId(c.Role().Node().DefaultChild().(awscdk.CfnElement))
		d.condition = recordsCondition(t, resources, role)
		if d.condition == nil {
			t.Fatalf("%s: no condition on the role's item actions", id)
		}
	}
	keys := []string{"order-42", "#", "a#b#c", "*", "?", "${*}", "é", strings.Repeat("k", 500), "ORDER 42"}
	written := map[string][]string{} // the partition keys each consumer's handler writes
	for id, d := range consumers {
		store, err := dynamostore.FromEnv(nil, pub.Env(d.settings.Encode()).Getenv)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		guard, err := idempotency.NewGuard(store, guardconfig.Of(d.settings))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for _, k := range keys {
			pk, err := guard.Key(k)
			if err != nil {
				t.Fatalf("%s: key %q: %v", id, k, err)
			}
			partition := store.KeyAttributes()[0]
			v, ok := store.ItemKey(pk)[partition].(*types.AttributeValueMemberS)
			if !ok || v.Value == "" {
				t.Fatalf("%s: the item of %q has no string %s: %v", id, pk, partition, store.ItemKey(pk))
			}
			written[id] = append(written[id], v.Value)
		}
	}
	shared := []string{"SharedA", "SharedB"}
	for id, d := range consumers {
		for other, pks := range written {
			if consumers[other].table != d.table {
				continue
			}
			want := other == id || slices.Contains(shared, id) && slices.Contains(shared, other)
			for _, pk := range pks {
				if got := allows(d.condition, pk); got != want {
					t.Errorf("%s's condition %v on %s's partition key %q: allows %t, want %t", id, d.condition, other, pk, got, want)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	for _, id := range []string{"Reserve", "Email", "SharedA"} {
		t.Logf("%s: %v", id, consumers[id].condition)
	}
}

// recordsCondition is the Condition of the statement of role's policy
// that allows the guard's item actions (GetItem among them) with one.
func recordsCondition(t *testing.T, resources map[string]any, role string) map[string]any {
	t.Helper()
	for _, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		p := r["Properties"].(map[string]any)
		if fmt.Sprint(p["Roles"]) != fmt.Sprint([]any{map[string]any{"Ref": role}}) {
			continue
		}
		for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := st.(map[string]any)
			actions, _ := st["Action"].([]any)
			if c, ok := st["Condition"].(map[string]any); ok && slices.Contains(actions, any("dynamodb:GetItem")) {
				return c
			}
		}
	}
	return nil
}

// allows evaluates condition, as IAM does, for a request whose one leading
// key is pk: every operator must hold; Null false holds (the key is
// present), and ForAllValues holds when pk matches one of its values.
func allows(condition map[string]any, pk string) bool {
	for op, body := range condition {
		values, _ := body.(map[string]any)["dynamodb:LeadingKeys"].([]any)
		var match func(pattern, value string) bool
		switch op {
		case "Null":
			if body.(map[string]any)["dynamodb:LeadingKeys"] != "false" {
				return false
			}
			continue
		case "ForAllValues:StringLike":
			match = iamcond.StringLike
		case "ForAllValues:StringEquals":
			match = iamcond.StringEquals
		default:
			return false // an operator this evaluation does not know
		}
		ok := false
		for _, v := range values {
			ok = ok || match(v.(string), pk)
		}
		if !ok {
			return false
		}
	}
	return true
}
