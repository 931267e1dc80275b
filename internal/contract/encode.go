package contract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Encode returns the environment variables that carry s, with the
// contract's Version: every entry of Fields, so that the handler never
// falls back on a default the construct did not choose, but for a value
// whose encoding is empty (an empty list, KeySecret or text), which is left
// out, and for the table's design (TablePartitionKey, TableSortKey,
// TableRecordKeyIn, TableFixedKeyValue, TableTTLAttribute), written only
// where it is not the design of the table the construct creates. The
// source and the stream settings are written only where they are not the
// default (a queue consumer's environment says nothing of them), and the
// settings that only a queue reads only for a queue consumer (source.go).
func (s Settings) Encode() map[string]string {
	env := map[string]string{VersionVar: strconv.Itoa(Version)}
	for _, f := range fields {
		if f.skipped(s) { // a default of the table's design or of the source, a queue setting of a stream consumer
			continue
		}
		if v := f.encode(s); v != "" {
			env[f.Var] = v
		}
	}
	return env
}

// Names returns the names of every variable of the contract: VersionVar
// and the variable of each entry of Fields.
func Names() []string {
	names := []string{VersionVar}
	for _, f := range fields {
		names = append(names, f.Var)
	}
	return names
}

// ErrVersion means the environment was written for another version of the
// contract than the handler's library reads: the construct that deployed
// the function and the library the handler was built with differ.
var ErrVersion = errors.New("contract version mismatch")

// Decode reads the Settings that the construct wrote into the environment,
// through getenv (usually os.Getenv), and validates them. Variables that are
// not set take the defaults of their entries in Fields, so that a handler
// deployed by other means needs only IDEMPOTENCY_TABLE and
// IDEMPOTENCY_NAMESPACE; fallbackConsumer (usually the Lambda function's
// name) names the consumer when CONSUMER_NAME is not set. A contract version
// other than Version is an error wrapping ErrVersion; a value that does not
// parse is an error that names the variable; settings that break a rule of
// Problems are an error that lists them, each with the variable that
// carries the setting.
func Decode(getenv func(string) string, fallbackConsumer string) (Settings, error) {
	if v := getenv(VersionVar); v != "" && v != strconv.Itoa(Version) {
		return Settings{}, fmt.Errorf("%w: the function's environment was written for contract version %s (%s=%s) by the IdempotentConsumer construct that deployed it, but this handler was built with a library that reads version %d; build the handler with the same version of github.com/idempotent-consumer/idempotent-consumer as the construct",
			ErrVersion, v, VersionVar, v, Version)
	}
	var s Settings
	var problems []string
	for _, f := range fields {
		v := getenv(f.Var)
		if v == "" {
			f.setDefault(&s)
			continue
		}
		if err := f.decode(&s, v); err != nil {
			problems = append(problems, err.Error())
			f.setDefault(&s)
		}
	}
	if s.Consumer == "" {
		s.Consumer = fallbackConsumer
	}
	if len(problems) > 0 {
		return Settings{}, errors.New("unreadable settings:\n  - " + strings.Join(problems, "\n  - "))
	}
	if problems := s.Problems(); len(problems) > 0 {
		return Settings{}, errors.New("invalid settings:\n  - " + strings.Join(withVariables(problems), "\n  - "))
	}
	return s, nil
}

// DecodeTable reads the idempotency table's name and design alone
// (TableVar and the variables of the table's design, PartitionKeyVar to
// TTLAttributeVar), as Decode reads them, through getenv: for a caller that
// needs the store of a consumer's table and nothing of the consumer
// (dynamostore.FromEnv). The other settings are their zero values. A value
// that breaks a rule of the table's design is an error that names its
// variable.
func DecodeTable(getenv func(string) string) (Settings, error) {
	var s Settings
	for _, f := range fields {
		if f.Var != TableVar && !f.design {
			continue
		}
		if v := getenv(f.Var); v != "" {
			_ = f.decode(&s, v) // every entry of the design is text, which always decodes
		} else {
			f.setDefault(&s)
		}
	}
	var problems []string
	if s.Table == "" {
		problems = append(problems, "Table is empty; the idempotency table's name is required")
	}
	if problems = append(problems, s.designProblems()...); len(problems) > 0 {
		return Settings{}, errors.New("invalid table design:\n  - " + strings.Join(withVariables(problems), "\n  - "))
	}
	return s, nil
}

// withVariables prefixes each problem that starts with a setting's name
// with the variable that carries it ("IDEMPOTENCY_WINDOW: Window 10s is
// …"), so that an init error names what to change in the function's
// environment, in the words of the construct's refusal at synth.
func withVariables(problems []string) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = p
		name, _, _ := strings.Cut(p, " ")
		if f, ok := fieldOfSetting(name); ok {
			out[i] = f.Var + ": " + p
		}
	}
	return out
}

// fieldOfSetting returns the entry of the Settings field name.
func fieldOfSetting(name string) (Field, bool) {
	for _, f := range fields {
		if f.Setting == name {
			return f, true
		}
	}
	return Field{}, false
}
