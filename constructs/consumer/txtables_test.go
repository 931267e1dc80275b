package consumer_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/cdktest"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/consumer"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/testkit/consumertest"
)

// txHandlers are handler main packages whose effect is transactional, one
// per source with a transactional entry point (consumertest.TxSources),
// each in a module of its own on this working tree's library.
var txHandlers struct {
	once sync.Once
	dirs map[string]string
	err  error
}

// txHandlerDir is the transactional handler of source (sqsbatch,
// eventbridge, kinesis, dynamodbstream), written once for the package's
// tests.
func txHandlerDir(t *testing.T, source string) string {
	t.Helper()
	txHandlers.once.Do(func() {
		txHandlers.dirs = map[string]string{}
		for name, src := range consumertest.TxSources {
			dir := filepath.Join(filepath.Dir(outRoot), "tx-"+name)
			if txHandlers.err = consumertest.WriteLibraryModule(dir, src); txHandlers.err != nil {
				return
			}
			txHandlers.dirs[name] = dir
		}
	})
	if txHandlers.err != nil {
		t.Fatal(txHandlers.err)
	}
	return txHandlers.dirs[source]
}

// TestBootstrapLinksTransactions reads real bootstraps: the transactional
// handler of every source links a transactional effect (it read only
// sqsbatch's before, so an eventbridge, kinesis or dynamodbstream NewTx
// went unseen), the plain one's does not.
func TestBootstrapLinksTransactions(t *testing.T) {
	type handler struct {
		name, entry string
		want        bool
	}
	handlers := []handler{{"plain", handlerDir, false}}
	for source := range consumertest.TxSources {
		handlers = append(handlers, handler{source + " transactional", txHandlerDir(t, source), true})
	}
	for _, tc := range handlers {
		for _, goarch := range []string{"arm64", "amd64"} {
			dir, err := consumer.BuildBootstrap(tc.entry, goarch)
			if err != nil {
				t.Fatal(err)
			}
			got, err := consumer.LinksTransactions(filepath.Join(dir, "bootstrap"))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s handler for %s: links transactions = %t, want %t", tc.name, goarch, got, tc.want)
			}
		}
	}
	if _, err := consumer.LinksTransactions(filepath.Join(handlerDir, "main.go")); err == nil {
		t.Error("a file that is not a binary reads as a bootstrap")
	}
}

// synthTx synthesizes an app with the transactional handler's consumer C,
// configured by build, and returns its template, or the panic's message.
func synthTx(t *testing.T, name string, build func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer)) (tpl assertions.Template, stack awscdk.Stack, c consumer.IdempotentConsumer, msg string) {
	t.Helper()
	entry := txHandlerDir(t, "sqsbatch")
	msg, _ = cdktest.Panics(func() {
		app, err := cdktest.NewApp(filepath.Join(outRoot, name))
		if err != nil {
			panic(err)
		}
		stack = awscdk.NewStack(app, jsii.String("S"), nil)
		props := &consumer.IdempotentConsumerProps{Props: core.Props{Entry: jsii.String(entry)}}
		after := build(stack, props)
		c = consumer.NewIdempotentConsumer(stack, jsii.String("ReserveStock"), props)
		if after != nil {
			after(c)
		}
		app.Synth(nil)
		tpl = assertions.Template_FromStack(stack, nil)
	})
	return tpl, stack, c, msg
}

func stockTable(stack awscdk.Stack, id string) awsdynamodb.Table {
	return awsdynamodb.NewTable(stack, jsii.String(id), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
		TimeToLiveAttribute: jsii.String("ttl"),
	})
}

// TestTransactionalHandlerWithoutDeclaredTablesIsRefused: the handler
// calls StartTx's NewTx and the consumer declares no table; synth fails
// with the fix. Before: accepted, and in AWS every write AccessDenied.
func TestTransactionalHandlerWithoutDeclaredTablesIsRefused(t *testing.T) {
	_, _, _, msg := synthTx(t, "TxUndeclared", func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer) {
		stockTable(stack, "Stock") // written by the effect, never declared
		return nil
	})
	if msg == "" {
		t.Fatal("synth accepted a transactional handler with no table declared")
	}
	t.Log(msg)
	for _, w := range []string{`IdempotentConsumer "ReserveStock": the handler makes transactional writes`, "fix: set TransactionalTables", "GrantTransactionalWrites(table, theConsumer)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal does not say %q", w)
		}
	}
}

func txTablesVar(t *testing.T, tpl assertions.Template, want any) {
	t.Helper()
	cdktest.Must(t, func() {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
			"Environment": map[string]any{"Variables": map[string]any{contract.TxTablesVar: want}},
		})
	})
}

// TestTransactionalTablesAreGrantedAndNamed: a table declared with the prop,
// or later with GrantTransactionalWrites on the consumer, is granted the
// transactional item actions and named in IDEMPOTENCY_TX_TABLES.
func TestTransactionalTablesAreGrantedAndNamed(t *testing.T) {
	t.Run("prop", func(t *testing.T) {
		var stock awsdynamodb.Table
		tpl, stack, c, msg := synthTx(t, "TxProp", func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer) {
			stock = stockTable(stack, "Stock")
			props.TransactionalTables = &[]awsdynamodb.ITable{stock}
			return nil
		})
		if msg != "" {
			t.Fatal(msg)
		}
		stockID := *stack.GetLogicalId(stock.Node().DefaultChild().(awscdk.CfnElement))
		txTablesVar(t, tpl, ref(stockID))
		cdktest.Must(t, func() {
			tpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
				"Roles": []any{ref(*stack.GetLogicalId(c.Role().Node().DefaultChild().(awscdk.CfnElement)))},
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					allow([]any{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}, arn(stockID)),
				})},
			})
		})
	})
	t.Run("GrantTransactionalWrites after", func(t *testing.T) {
		var stock, ledger awsdynamodb.Table
		tpl, stack, _, msg := synthTx(t, "TxGrant", func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer) {
			stock, ledger = stockTable(stack, "Stock"), stockTable(stack, "Ledger")
			return func(c consumer.IdempotentConsumer) {
				consumer.GrantTransactionalWrites(stock, c)
				consumer.GrantTransactionalWrites(ledger, c)
				consumer.GrantTransactionalWrites(stock, c) // once each
			}
		})
		if msg != "" {
			t.Fatal(msg)
		}
		lid := func(tb awsdynamodb.Table) string {
			return *stack.GetLogicalId(tb.Node().DefaultChild().(awscdk.CfnElement))
		}
		txTablesVar(t, tpl, map[string]any{"Fn::Join": []any{",", []any{ref(lid(stock)), ref(lid(ledger))}}})
	})
	t.Run("its own shared table", func(t *testing.T) {
		var shared awsdynamodb.Table
		var email consumer.IdempotentConsumer
		tpl, stack, c, msg := synthTx(t, "TxShared", func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer) {
			shared = stockTable(stack, "Shop")
			props.Table, props.Namespace = shared, jsii.String("reserve")
			props.TransactionalTables = &[]awsdynamodb.ITable{shared}
			return func(consumer.IdempotentConsumer) {
				// Another consumer of the table, made after, declares it
				// with GrantTransactionalWrites.
				email = consumer.NewIdempotentConsumer(stack, jsii.String("EmailCustomer"), &consumer.IdempotentConsumerProps{
					Props: core.Props{Entry: props.Entry, Table: shared, Namespace: jsii.String("email")},
				})
				consumer.GrantTransactionalWrites(shared, email)
			}
		})
		if msg != "" {
			t.Fatal(msg)
		}
		sharedID := *stack.GetLogicalId(shared.Node().DefaultChild().(awscdk.CfnElement))
		txTablesVar(t, tpl, ref(sharedID))
		// The record's grant is scoped to the namespace's items
		// (dynamodb:LeadingKeys), and the effect writes the table's other
		// items: a second statement, the effect's, which excludes the other
		// consumer's records.
		for _, tc := range []struct {
			c           consumer.IdempotentConsumer
			own, others string
		}{{c, "reserve", `["email#*"]`}, {email, "email", `["reserve#*"]`}} {
			var policy map[string]*map[string]any
			cdktest.Must(t, func() {
				policy = *tpl.FindResources(jsii.String("AWS::IAM::Policy"), map[string]any{
					"Properties": map[string]any{"Roles": []any{ref(*stack.GetLogicalId(tc.c.Role().Node().DefaultChild().(awscdk.CfnElement)))}},
				})
			})
			var scoped, effect int
			for _, p := range policy {
				for _, s := range (*p)["Properties"].(map[string]any)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					if !strings.Contains(jsonOf(t, s), sharedID) {
						continue
					}
					st := s.(map[string]any)
					cond := jsonOf(t, st["Condition"])
					switch {
					case strings.Contains(cond, `"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["`+tc.own+`#*"]}`):
						scoped++
					case cond == `{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":`+tc.others+`}}` && jsonOf(t, st["Action"]) == `["dynamodb:ConditionCheckItem","dynamodb:DeleteItem","dynamodb:PutItem","dynamodb:UpdateItem"]`:
						effect++
					default:
						t.Errorf("%s: unexpected statement on the shared table: %s", tc.own, jsonOf(t, st))
					}
				}
			}
			if scoped != 1 || effect != 1 {
				t.Errorf("%s: statements on the shared table: %d scoped to the namespace (the record's), %d with the transactional actions except the records of %s (the effect's); want 1 and 1", tc.own, scoped, effect, tc.others)
			}
		}
	})
}

// TestATableTheConstructCreatesIsClaimedToo: a consumer's own table (one
// the construct creates, not a shared one) holds its records just the
// same, so a transactional grant on it to another consumer keeps off them.
// Before: the created table had no claim, and the grant wrote every record.
func TestATableTheConstructCreatesIsClaimedToo(t *testing.T) {
	var other consumer.IdempotentConsumer
	tpl, stack, c, msg := synthTx(t, "TxCreated", func(stack awscdk.Stack, props *consumer.IdempotentConsumerProps) func(consumer.IdempotentConsumer) {
		props.TransactionalTables = &[]awsdynamodb.ITable{stockTable(stack, "Stock")}
		return func(c consumer.IdempotentConsumer) {
			other = consumer.NewIdempotentConsumer(stack, jsii.String("Audit"), &consumer.IdempotentConsumerProps{Props: core.Props{Entry: props.Entry}})
			consumer.GrantTransactionalWrites(c.Table(), other)
		}
	})
	if msg != "" {
		t.Fatal(msg)
	}
	tableID := *stack.GetLogicalId(c.Table().Node().DefaultChild().(awscdk.CfnElement))
	var policy map[string]*map[string]any
	cdktest.Must(t, func() {
		policy = *tpl.FindResources(jsii.String("AWS::IAM::Policy"), map[string]any{
			"Properties": map[string]any{"Roles": []any{ref(*stack.GetLogicalId(other.Role().Node().DefaultChild().(awscdk.CfnElement)))}},
		})
	})
	var effects []string
	for _, p := range policy {
		for _, st := range (*p)["Properties"].(map[string]any)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			if strings.Contains(jsonOf(t, st), tableID) {
				effects = append(effects, jsonOf(t, st.(map[string]any)["Condition"]))
			}
		}
	}
	if want := `{"ForAllValues:StringNotLike":{"dynamodb:LeadingKeys":["reservestock#*"]}}`; len(effects) != 1 || effects[0] != want {
		t.Errorf("the other consumer's statements on ReserveStock's own table have the conditions %v; want one, %s", effects, want)
	}
}

// allow is an IAM statement as CDK writes it.
func allow(actions []any, resource any) map[string]any {
	return map[string]any{"Action": actions, "Effect": "Allow", "Resource": resource}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
