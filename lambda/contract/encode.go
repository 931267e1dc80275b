package contract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Encode returns the environment variables that carry s, with the
// contract's Version. Every setting is written, so that the handler never
// falls back on a default the construct did not choose; an empty
// PayloadIgnore, KeySecret or TxTables, and a MaxReceiveCount of 0, are
// left out.
func (s Settings) Encode() map[string]string {
	env := map[string]string{
		VersionVar:          strconv.Itoa(Version),
		TableVar:            s.Table,
		NamespaceVar:        s.Namespace,
		WindowVar:           Format(s.Window),
		TTLAfterWindowVar:   Format(s.TTLAfterWindow),
		TimeoutVar:          Format(s.Timeout),
		LeaseMaxVar:         Format(s.LeaseMax),
		FinishBudgetVar:     Format(s.FinishBudget),
		CacheSizeVar:        strconv.Itoa(s.CacheSize),
		BatchSizeVar:        strconv.Itoa(s.BatchSize),
		BatchConcurrencyVar: strconv.Itoa(s.BatchConcurrency),
		MinRemainingVar:     Format(s.MinRemaining),
		MaxMessageBytesVar:  strconv.Itoa(s.MaxMessageBytes),
		DeliveryVar:         string(s.Delivery),
		FIFOVar:             strconv.FormatBool(s.FIFO),
		ConsumerVar:         s.Consumer,
		MetricsNamespaceVar: s.MetricsNamespace,
	}
	if len(s.PayloadIgnore) > 0 {
		env[PayloadIgnoreVar] = strings.Join(s.PayloadIgnore, ",")
	}
	if s.KeySecret != "" {
		env[KeySecretVar] = s.KeySecret
	}
	if len(s.TxTables) > 0 {
		env[TxTablesVar] = strings.Join(s.TxTables, ",")
	}
	if s.MaxReceiveCount > 0 {
		env[MaxReceiveCountVar] = strconv.Itoa(s.MaxReceiveCount)
	}
	return env
}

// Names returns the names of every variable of the contract.
func Names() []string {
	return []string{
		VersionVar, TableVar, NamespaceVar, WindowVar, TTLAfterWindowVar, TimeoutVar, LeaseMaxVar, FinishBudgetVar,
		CacheSizeVar, PayloadIgnoreVar, KeySecretVar, BatchSizeVar, BatchConcurrencyVar, MinRemainingVar,
		MaxMessageBytesVar, DeliveryVar, FIFOVar, ConsumerVar, MetricsNamespaceVar, TxTablesVar, MaxReceiveCountVar,
	}
}

// ErrVersion means the environment was written for another version of the
// contract than the handler's library reads: the construct that deployed
// the function and the library the handler was built with differ.
var ErrVersion = errors.New("contract version mismatch")

// Decode reads the Settings that the construct wrote into the environment,
// through getenv (usually os.Getenv), and validates them. Variables that are
// not set take their defaults, so that a handler deployed by other means
// needs only IDEMPOTENCY_TABLE and IDEMPOTENCY_NAMESPACE; fallbackConsumer
// (usually the Lambda function's name) names the consumer when
// CONSUMER_NAME is not set. A contract version other than Version is an
// error wrapping ErrVersion; a value that does not parse, or settings that
// break a rule of Validate, are errors that name the variable or the rule.
func Decode(getenv func(string) string, fallbackConsumer string) (Settings, error) {
	if v := getenv(VersionVar); v != "" && v != strconv.Itoa(Version) {
		return Settings{}, fmt.Errorf("%w: the function's environment was written for contract version %s (%s=%s) by the IdempotentConsumer construct that deployed it, but this handler was built with a library that reads version %d; build the handler with the same version of github.com/idempotent-consumer/idempotent-consumer as the construct",
			ErrVersion, v, VersionVar, v, Version)
	}
	d := decoder{getenv: getenv}
	timeout := d.duration(TimeoutVar, DefaultTimeout)
	s := Defaults(timeout, d.integer(BatchSizeVar, DefaultBatchSize))
	s.Table = getenv(TableVar)
	s.Namespace = getenv(NamespaceVar)
	s.Window = d.duration(WindowVar, s.Window)
	s.TTLAfterWindow = d.duration(TTLAfterWindowVar, s.TTLAfterWindow)
	s.LeaseMax = d.duration(LeaseMaxVar, s.LeaseMax)
	s.FinishBudget = d.duration(FinishBudgetVar, s.FinishBudget)
	s.MinRemaining = d.duration(MinRemainingVar, DefaultMinRemaining(s.FinishBudget))
	s.CacheSize = d.integer(CacheSizeVar, s.CacheSize)
	if v := getenv(PayloadIgnoreVar); v != "" {
		s.PayloadIgnore = strings.Split(v, ",")
	}
	s.KeySecret = getenv(KeySecretVar)
	s.BatchConcurrency = d.integer(BatchConcurrencyVar, s.BatchConcurrency)
	s.MaxMessageBytes = d.integer(MaxMessageBytesVar, s.MaxMessageBytes)
	if v := getenv(DeliveryVar); v != "" {
		s.Delivery = Delivery(v)
	}
	s.FIFO = d.boolean(FIFOVar, s.FIFO)
	s.Consumer = orDefault(getenv(ConsumerVar), fallbackConsumer)
	s.MetricsNamespace = orDefault(getenv(MetricsNamespaceVar), s.MetricsNamespace)
	if v := getenv(TxTablesVar); v != "" {
		s.TxTables = strings.Split(v, ",")
	}
	s.MaxReceiveCount = d.integer(MaxReceiveCountVar, 0)
	if len(d.problems) > 0 {
		return Settings{}, errors.New("unreadable settings:\n  - " + strings.Join(d.problems, "\n  - "))
	}
	return s, s.Validate()
}

// decoder parses variables, collecting what does not parse.
type decoder struct {
	getenv   func(string) string
	problems []string
}

func (d *decoder) duration(name string, def time.Duration) time.Duration {
	v := d.getenv(name)
	if v == "" {
		return def
	}
	t, err := time.ParseDuration(v)
	if err != nil {
		d.problems = append(d.problems, fmt.Sprintf("%s=%q: want a Go duration such as \"24h\" or \"1500ms\"", name, v))
		return def
	}
	return t
}

func (d *decoder) integer(name string, def int) int {
	v := d.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		d.problems = append(d.problems, fmt.Sprintf("%s=%q: want a whole number", name, v))
		return def
	}
	return n
}

// boolean reads "true" or "false", exactly as Encode writes them: a
// variable that says more than that is a mistake to report, not a truth
// value to guess (strconv.ParseBool would take "1", "t" and "TRUE").
func (d *decoder) boolean(name string, def bool) bool {
	switch v := d.getenv(name); v {
	case "":
		return def
	case "true", "false":
		return v == "true"
	default:
		d.problems = append(d.problems, fmt.Sprintf("%s=%q: want \"true\" or \"false\"", name, v))
		return def
	}
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
