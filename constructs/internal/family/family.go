// Package family is the core every construct of the family is built on
// (the queue consumer, the stream consumer, the endpoint; the next
// construct too): compute, check, build.
//
//   - compute: Resolve applies every default of the shared props
//     (core.Props) once, into Settings: the handler's runtime settings
//     (contract.Settings, the construct's own values merged in by the
//     callback it gives) and the function's. It checks no rule; it notes
//     only the props it cannot read (tokens, fractions).
//   - check: rules are data (Rule: the props a rule reads, its check, its
//     message with the value, the rule and the fix); Evaluate runs a list
//     of them once, and a construct reports every problem at once (Fail).
//     Rules are the shared ones (Rules) followed by the construct's own.
//   - build: the builders read Settings alone (NewTable, NewFunction,
//     Bundle, Warn), never the props.
//
// A construct holds only what its source adds: its own props (embedding
// core.Props), their defaults and rules, and the resources of its source.
package family

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/table"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/internal/limits"
)

// Kind is what a construct tells the core about itself: its name and noun
// in messages and descriptions, its defaults where they differ from the
// family's, and how its function is invoked (for cdk-nag).
type Kind struct {
	// Name is the construct's type ("IdempotentConsumer"), in errors.
	Name string
	// Noun names it in descriptions ("idempotent consumer").
	Noun string
	// FunctionID is the construct id of its function.
	FunctionID string
	// Timeout is the function's default timeout.
	Timeout time.Duration
	// ReservedConcurrency is the default ReservedConcurrentExecutions (0:
	// none), and ReservedMin the least accepted.
	ReservedConcurrency, ReservedMin float64
	// ReservedWhy says why a value below ReservedMin is refused.
	ReservedWhy string
	// InvokedBy is why the function has no dead-letter queue: what
	// invokes it, and where a failure goes (cdk-nag's
	// Serverless-LambdaDLQ).
	InvokedBy string
	// TxGrant is how a table is declared for a transactional effect after
	// the construct is created ("consumer.GrantTransactionalWrites"), if
	// the construct has a way; "": TransactionalTables alone.
	TxGrant string
}

// MaxBatchingWindow is the longest batching window of a Lambda event
// source, an SQS queue's as a stream's.
const MaxBatchingWindow = 5 * time.Minute

// TablePlaceholder stands for the table's name while the props are
// checked: the name is a token, known once the table exists.
const TablePlaceholder = "(the idempotency table)"

// Settings are the shared props with their defaults applied: what the
// builders build from, and the rules check.
type Settings struct {
	Kind Kind
	// ID is the construct id.
	ID string
	// Runtime is written into the function's environment; its Table is
	// TablePlaceholder until the table exists, its Consumer the id until
	// the construct knows its path.
	Runtime          contract.Settings
	Entry, EntryRoot string
	// functionSettings are the function's (function.go).
	functionSettings
	// Removal is the removal policy of what the construct creates to keep
	// (the table; the stream consumer's failure bucket).
	Removal awscdk.RemovalPolicy
	// Table is the given table; nil: the construct creates one.
	Table awsdynamodb.ITable
	// TxTables are TransactionalTables without their nil entries (a
	// problem of their own).
	TxTables    []awsdynamodb.ITable
	AlarmAction awscloudwatch.IAlarmAction
	Dashboard   bool
	// WindowIsDefault: Window is nil.
	WindowIsDefault bool

	// What the rules judge, read once from the props and the resources
	// they name.
	props      *core.Props
	tableKeys  table.Keys
	tableTTL   tableTTL
	unreadable []string
	// global is GlobalTable, replication the table's Regions (read from a
	// Table of the app, or declared by GlobalTable).
	global      globalSettings
	replication table.Replication
}

// Resolve applies the defaults of the shared props p of the construct of
// kind with the construct id id. own gives the construct's runtime values
// (by the contract's field, as contract.Fill asks them) for the settings
// the shared props do not set; a shared prop that is set wins. It checks
// no rule (Problems does).
func Resolve(kind Kind, id string, p *core.Props, own func(contract.Field) (any, bool)) *Settings {
	rd := &Reader{}
	s := &Settings{Kind: kind, ID: id, props: p}
	shared := runtimeValues(p, kind, rd)
	s.Runtime = contract.Fill(func(f contract.Field) (any, bool) {
		if v, ok := shared[f.Var]; ok {
			return v, true
		}
		if own != nil {
			return own(f)
		}
		return nil, false
	})
	s.Runtime.Table = TablePlaceholder
	s.Runtime.Consumer = id
	s.Runtime.Namespace = defaultNamespace(id)
	if p.Namespace != nil {
		s.Runtime.Namespace = *p.Namespace
	}
	s.WindowIsDefault = p.Window == nil
	s.Entry, s.EntryRoot = Str(p.Entry, ""), Str(p.EntryRoot, "")
	s.resolveFunction(p, rd)
	s.Table, s.Removal, s.AlarmAction = p.Table, p.RemovalPolicy, p.AlarmAction
	if s.Removal == "" {
		s.Removal = DefaultRemovalPolicy
	}
	s.Dashboard = p.Dashboard != nil && *p.Dashboard
	if p.TransactionalTables != nil {
		for _, t := range *p.TransactionalTables {
			if t != nil {
				s.TxTables = append(s.TxTables, t)
			}
		}
	}
	s.read(p)
	s.unreadable = rd.Problems
	return s
}

// runtimeValues are the runtime settings the shared props set, by the
// contract's variable: a prop given (read by rd), or the kind's default.
func runtimeValues(p *core.Props, kind Kind, rd *Reader) map[string]any {
	out := map[string]any{contract.TimeoutVar: rd.Duration("Timeout", p.Timeout, kind.Timeout)}
	if v, ok := rd.ReadDuration("Window", p.Window); ok {
		out[contract.WindowVar] = v
	}
	if v, ok := rd.ReadDuration("TTLAfterWindow", p.TTLAfterWindow); ok {
		out[contract.TTLAfterWindowVar] = v
	}
	if p.MetricsNamespace != nil {
		out[contract.MetricsNamespaceVar] = *p.MetricsNamespace
	}
	return out
}

// Problems are every shared rule the settings break (Rules), after the
// props that could not be read: the messages, in order, for Fail.
func (s *Settings) Problems() []string {
	problems, _ := Evaluate(s, Rules)
	return append(append([]string(nil), s.unreadable...), problems...)
}

// Warnings are the shared rules' warnings for the settings.
func (s *Settings) Warnings() []Warning {
	_, warnings := Evaluate(s, Rules)
	return warnings
}

// Fail is the error of a construct of kind with the construct id id whose
// props break rules: every problem, once, in one error; nil without any.
func Fail(kind Kind, id string, problems []string) error {
	var out []string
	for _, p := range problems {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("%s %q: invalid props:\n  - %s", kind.Name, id, strings.Join(out, "\n  - "))
}

// defaultNamespace is the Namespace of a construct that sets none: its
// construct id in lower case, without the characters the contract refuses
// in a namespace (limits.NamespaceAllows). It may be empty.
func defaultNamespace(id string) string {
	return strings.Map(func(r rune) rune {
		if !limits.NamespaceAllows(r) {
			return -1
		}
		return r
	}, strings.ToLower(id))
}

// Num reads an optional number prop: def when it is nil.
func Num(n *float64, def float64) float64 {
	if n == nil {
		return def
	}
	return *n
}

// Str reads an optional text prop: def when it is nil.
func Str(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
