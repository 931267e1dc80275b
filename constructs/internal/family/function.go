package family

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/bundle"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/function"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
)

// The function's shared settings, in one file: how they are read
// (resolveFunction), their rules (functionRules) and how they reach the
// function (NewFunction). A new setting of the function is a field of
// core.Props, a line in each of the three here, and, if the function
// building block does not take it yet, a field of function.Config.

// functionSettings are the function's settings, resolved.
type functionSettings struct {
	// Architecture is the function's, and Goarch the GOARCH its
	// bootstrap is built for ("" for one the construct does not build).
	Architecture awslambda.Architecture
	Goarch       string
	MemorySize   float64
	// EphemeralStorage is the size of /tmp in MiB; 0 for Lambda's.
	EphemeralStorage float64
	// Reserved is the reserved concurrency; nil for none.
	Reserved       *float64
	Tracing        awslambda.Tracing
	LogLevel       awslambda.ApplicationLogLevel
	LogRetention   awslogs.RetentionDays
	Role           awsiam.IRole // given; nil: the construct creates one
	Vpc            awsec2.IVpc
	VpcSubnets     *awsec2.SubnetSelection
	SecurityGroups *[]awsec2.ISecurityGroup
	Layers         *[]awslambda.ILayerVersion
	// Environment is the user's own variables; the builder writes the
	// contract's over them.
	Environment map[string]*string
	HashKeys    bool
	// layers are what each given layer declares of its architectures.
	layers []layerInfo
}

// functionRules are the rules of the function's settings.
var functionRules = []Rule[*Settings]{
	{Reads: []string{"Architecture"}, Check: Problem(architectureProblems)},
	{Reads: []string{"MemorySize"}, Check: Problem(memoryProblems)},
	{Reads: []string{"EphemeralStorageSize"}, Check: Problem(ephemeralStorageProblems)},
	{Reads: []string{"Vpc", "VpcSubnets", "SecurityGroups"}, Check: Problem(vpcProblems)},
	{Reads: []string{"ReservedConcurrentExecutions"}, Check: Problem(reservedProblems)},
	{Reads: []string{"LogLevel"}, Check: Problem(logLevelProblems)},
	{Reads: []string{"Layers", "Architecture"}, Check: layerFindings},
}

// resolveFunction resolves the function's settings: its size,
// concurrency, architecture, tracing, logs, role, network, layers, the
// user's environment and HashKeys.
func (s *Settings) resolveFunction(p *core.Props, rd *Reader) {
	s.MemorySize = Num(p.MemorySize, DefaultMemorySize)
	s.EphemeralStorage = Num(p.EphemeralStorageSize, 0)
	s.Reserved = p.ReservedConcurrentExecutions
	if s.Reserved == nil && s.Kind.ReservedConcurrency > 0 {
		v := s.Kind.ReservedConcurrency
		s.Reserved = &v
	}
	s.Architecture = p.Architecture
	if s.Architecture == nil {
		s.Architecture = awslambda.Architecture_ARM_64()
	}
	s.Goarch, _ = bundle.Goarch(*s.Architecture.Name())
	s.Tracing, s.LogLevel, s.LogRetention = p.Tracing, p.LogLevel, p.LogRetention
	if s.Tracing == "" {
		s.Tracing = DefaultTracing
	}
	if s.LogLevel == "" {
		s.LogLevel = DefaultLogLevel
	}
	if s.LogRetention == "" {
		s.LogRetention = DefaultLogRetention
	}
	s.Role, s.Vpc, s.VpcSubnets, s.SecurityGroups, s.Layers = p.Role, p.Vpc, p.VpcSubnets, p.SecurityGroups, p.Layers
	s.Environment = map[string]*string{}
	if p.Environment != nil {
		for k, v := range *p.Environment {
			s.Environment[k] = v
		}
	}
	s.HashKeys = p.HashKeys != nil && *p.HashKeys
	for _, n := range []struct {
		name string
		v    *float64
	}{{"MemorySize", p.MemorySize}, {"EphemeralStorageSize", p.EphemeralStorageSize}, {"ReservedConcurrentExecutions", p.ReservedConcurrentExecutions}} {
		if n.v != nil && *awscdk.Token_IsUnresolved(n.v) {
			rd.Problems = append(rd.Problems, fmt.Sprintf("%s is a token that CDK resolves only at deployment, but the construct needs its value; give a number", n.name))
		}
	}
}

func architectureProblems(s *Settings) []string {
	if s.Goarch == "" {
		return []string{fmt.Sprintf("Architecture %s is not one the construct builds for; give awslambda.Architecture_ARM_64() or awslambda.Architecture_X86_64()", *s.Architecture.Name())}
	}
	return nil
}

func memoryProblems(s *Settings) []string {
	if m := s.MemorySize; !IsInt(m) || m < 128 || m > 10240 {
		return []string{fmt.Sprintf("MemorySize %v is out of range; give a whole number of MiB from 128 to 10240 (default 256)", m)}
	}
	return nil
}

func ephemeralStorageProblems(s *Settings) []string {
	if e := s.EphemeralStorage; e != 0 && (!IsInt(e) || e < 512 || e > 10240) {
		return []string{fmt.Sprintf("EphemeralStorageSize %v is out of range; give a whole number of MiB from 512 to 10240 (default 512)", e)}
	}
	return nil
}

func vpcProblems(s *Settings) []string {
	if p := s.props; p.Vpc == nil && (p.VpcSubnets != nil || p.SecurityGroups != nil) {
		return []string{"VpcSubnets or SecurityGroups is set without Vpc, so the function would run outside any VPC and the setting would not apply; set Vpc too, or leave them nil"}
	}
	return nil
}

func reservedProblems(s *Settings) []string {
	if s.Reserved == nil {
		return nil
	}
	if rc := *s.Reserved; !IsInt(rc) || rc < s.Kind.ReservedMin {
		return []string{fmt.Sprintf("ReservedConcurrentExecutions %v is out of range; give a whole number of at least %v%s", rc, s.Kind.ReservedMin, s.Kind.ReservedWhy)}
	}
	return nil
}

// applicationLogLevels are Lambda's application log levels.
var applicationLogLevels = []awslambda.ApplicationLogLevel{
	awslambda.ApplicationLogLevel_TRACE, awslambda.ApplicationLogLevel_DEBUG, awslambda.ApplicationLogLevel_INFO,
	awslambda.ApplicationLogLevel_WARN, awslambda.ApplicationLogLevel_ERROR, awslambda.ApplicationLogLevel_FATAL,
}

func logLevelProblems(s *Settings) []string {
	if slices.Contains(applicationLogLevels, s.LogLevel) {
		return nil
	}
	names := make([]string, len(applicationLogLevels))
	for i, l := range applicationLogLevels {
		names[i] = string(l)
	}
	return []string{fmt.Sprintf("LogLevel %q is not one of Lambda's application log levels (%s); give one of the awslambda.ApplicationLogLevel_ constants, or leave it empty for INFO", string(s.LogLevel), strings.Join(names, ", "))}
}

// layerInfo is what a given layer declares of its architectures: archs
// (nil: none declared) when known, the layer being of the app.
type layerInfo struct {
	path, arn string
	archs     []string
	known     bool
}

// layerInfoOf reads the architectures a layer of the app declares; an
// imported layer's are not known.
func layerInfoOf(layer awslambda.ILayerVersion) layerInfo {
	info := layerInfo{path: *layer.Node().Path(), arn: *layer.LayerVersionArn()}
	cfn, ok := layer.Node().DefaultChild().(awslambda.CfnLayerVersion)
	if !ok || cfn == nil {
		return info
	}
	info.known = true
	if list := cfn.CompatibleArchitectures(); list != nil {
		for _, a := range *list {
			if a == nil || *awscdk.Token_IsUnresolved(a) {
				info.known, info.archs = false, nil
				return info
			}
			info.archs = append(info.archs, *a)
		}
	}
	return info
}

// layerFindings is the rule that a layer declared for some architectures
// includes the function's: a layer built for another one is code the
// function cannot run. A layer that declares none is accepted; an imported
// one is a warning that states the rule.
func layerFindings(s *Settings) (problems []string, warnings []Warning) {
	if s.Goarch == "" {
		return nil, nil // the architecture is refused
	}
	arch := *s.Architecture.Name()
	for _, l := range s.layers {
		switch {
		case !l.known:
			warnings = append(warnings, Warning{core.WarnLayerUnreadable, fmt.Sprintf("Layers holds the imported layer %s, whose compatible architectures the construct cannot read at synth; it must be built for %s, the function's Architecture.", l.arn, arch)})
		case len(l.archs) > 0 && !slices.Contains(l.archs, arch):
			problems = append(problems, fmt.Sprintf("Layers holds %s, declared for %s (its compatibleArchitectures), but the function is %s; give the layer built for %s, or set Architecture to one the layer is built for",
				l.path, strings.Join(l.archs, " and "), arch, arch))
		}
	}
	return problems, warnings
}

// NewFunction creates the function in scope from the asset in assetDir,
// on table: its log group, role, key secret, environment, grants on the
// records and on TransactionalTables (function.New), its cdk-nag
// suppressions (how it is invoked, and its wildcards, once its role holds
// every statement the construct adds: call SuppressWildcards last), and the
// synth-time refusal of a transactional handler with no table declared or
// on an MRSC table (TxValidation), for every member of the family.
func (s *Settings) NewFunction(scope constructs.Construct, assetDir string, t awsdynamodb.ITable) function.Function {
	f := function.New(scope, function.Config{
		IDs:                 function.IDs{LogGroup: ids.LogGroup, Role: ids.Role, Function: s.Kind.FunctionID, KeySecret: ids.KeySecret},
		Kind:                s.Kind.Noun,
		Name:                s.ID,
		AssetDir:            assetDir,
		Architecture:        s.Architecture,
		MemorySize:          s.MemorySize,
		EphemeralStorage:    s.EphemeralStorage,
		Timeout:             s.Runtime.Timeout,
		ReservedConcurrency: s.Reserved,
		Tracing:             s.Tracing,
		LogLevel:            s.LogLevel,
		LogRetention:        s.LogRetention,
		Role:                s.Role,
		Vpc:                 s.Vpc,
		VpcSubnets:          s.VpcSubnets,
		SecurityGroups:      s.SecurityGroups,
		Layers:              s.Layers,
		Environment:         s.Environment,
		Runtime:             s.Runtime,
		Table:               t,
		HashKeys:            s.HashKeys,
		TxTables:            s.TxTables,
		Suppressions:        []nag.Rule{{ID: "Serverless-LambdaDLQ", Reason: s.Kind.InvokedBy}},
	})
	// At synth, after every declaration of the app (tx.go).
	scope.Node().AddValidation(&TxValidation{Kind: s.Kind, ID: s.ID, Strong: s.Strong(), Linked: s.TxLinked(assetDir), Declared: f.TxTables.Len, Grant: s.Kind.TxGrant})
	return f
}

// SuppressWildcards marks the wildcard statements of f's role (X-Ray, the
// VPC's network interfaces) once the role holds every statement.
func (s *Settings) SuppressWildcards(f function.Function) {
	function.SuppressWildcards(f.Role, s.Tracing, s.Vpc)
}
