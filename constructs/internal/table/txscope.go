package table

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
)

// ExceptOthers is the IAM condition operator that keeps a transactional
// grant on an idempotency table off the records of the other namespaces
// claimed on it: no leading key of the request is one of theirs.
const ExceptOthers = "ForAllValues:StringNotLike"

// scopeTransactional keeps the statements of a transactional grant on table
// off the records of every namespace claimed on the table in the app but
// own (the grantee's namespace; "" for a grantee that has none). The claims
// are read when the template is synthesized, so that claims made after the
// grant count: by one aspect per stage (the app, or the Stage of the
// grantee, which its own synthesis visits first), on the stage itself,
// which the synthesis visits before any role (a role's own aspect freezes
// its statements). A
// table claimed by no consumer is a business table: its grant stays as it
// is. owner is where the warning on an imported idempotency table goes.
func scopeTransactional(table awsdynamodb.ITable, statements []awsiam.PolicyStatement, own string, owner constructs.IConstruct) {
	h, err := holder(table)
	if err != nil {
		panic(err)
	}
	s := scopesOf(h, owner)
	s.grants = append(s.grants, txGrant{table: table, key: Key(table), statements: statements, own: own, owner: owner})
}

// txGrant is a transactional grant to scope at synth.
type txGrant struct {
	table      awsdynamodb.ITable
	key        string
	statements []awsiam.PolicyStatement
	own        string
	owner      constructs.IConstruct
}

// txScopes is the aspect that scopes the transactional grants of a stage,
// on the stage.
type txScopes struct {
	holder constructs.IConstruct // the claims' holder, of the app
	stage  string                // the stage's path
	grants []txGrant
	done   bool
}

// registryMetadata is the metadata key of a stage that names its txScopes
// in scopes.
const registryMetadata = "idempotent-consumer:transactionalGrants"

// scopes are the txScopes of the process's stages, by their
// registryMetadata.
var scopes = struct {
	sync.Mutex
	next int
	of   map[string]*txScopes
}{of: map[string]*txScopes{}}

// scopesOf is the txScopes of the stage of owner (the app's root outside
// any stage), added to it on first use; h is the app's claims' holder.
func scopesOf(h, owner constructs.IConstruct) *txScopes {
	var stage constructs.IConstruct = h.Node().Root()
	if st := awscdk.Stage_Of(owner); st != nil {
		stage = st
	}
	scopes.Lock()
	defer scopes.Unlock()
	id := metadata(stage, registryMetadata)
	if s, ok := scopes.of[id]; ok {
		return s
	}
	scopes.next++
	id = strconv.Itoa(scopes.next)
	s := &txScopes{holder: h, stage: *stage.Node().Path()}
	scopes.of[id] = s
	stage.Node().AddMetadata(jsii.String(registryMetadata), jsii.String(id), nil)
	awscdk.Aspects_Of(stage).Add(s, &awscdk.AspectOptions{Priority: jsii.Number(scopePriority)})
	return s
}

// scopePriority runs the aspect before the mutating aspects (a role's that
// splits and freezes its policy, at awscdk.AspectPriority_MUTATING) where
// the app orders aspects by priority.
const scopePriority = 100

// Visit implements awscdk.IAspect: on the stage, once, it adds the
// conditions to every grant of the stage.
func (s *txScopes) Visit(node constructs.IConstruct) {
	if s.done || *node.Node().Path() != s.stage {
		return
	}
	s.done = true
	for _, g := range s.grants {
		g.scope(s.holder)
	}
}

// scope adds the condition to g's statements, from the claims in holder.
func (g txGrant) scope(holder constructs.IConstruct) {
	claimed := claimedNamespaces(holder, g.key)
	if len(claimed) == 0 {
		return
	}
	var patterns []any
	var names []string
	for _, c := range claimed {
		names = append(names, c.namespace)
		if c.namespace != g.own {
			patterns = append(patterns, c.pattern)
		}
	}
	if len(patterns) > 0 {
		for _, st := range g.statements {
			st.AddCondition(jsii.String(ExceptOthers), map[string]any{"dynamodb:LeadingKeys": patterns})
		}
	}
	if !DefinedInApp(g.table) {
		awscdk.Annotations_Of(g.owner).AddWarningV2(jsii.String(core.WarnTransactionalTableImported), jsii.String(fmt.Sprintf(
			"Transactional writes on the table %s, the idempotency table of consumers of this app (namespaces %s), are kept off the records of this app's other consumers only: the table is imported, so a consumer of another app, or of a stack deployed apart, that shares it is not known at synth, and this effect may write that consumer's records; give that consumer a table of its own, or acknowledge this warning (%s) if no consumer outside this app uses the table",
			*g.table.Node().Path(), strings.Join(names, ", "), core.WarnTransactionalTableImported)), nil)
	}
}

// DefinedInApp reports whether the app defines table (it is not imported).
func DefinedInApp(table awsdynamodb.ITable) bool {
	switch table.Node().DefaultChild().(type) {
	case awsdynamodb.CfnTable, awsdynamodb.CfnGlobalTable:
		return true
	}
	return false
}
