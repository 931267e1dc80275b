package consumertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/idempotent-consumer/idempotent-consumer/internal/modroot"
)

// library is the module path of this repository's library.
const library = "github.com/idempotent-consumer/idempotent-consumer"

// TxSources are the packages whose entry points take a transactional
// effect, and each one's main package that instantiates its NewTx, as its
// StartTx and FromEnvTx do (the bootstrap is built, never run).
var TxSources = map[string]string{
	"sqsbatch": txMain("sqsbatch", `key := func(msg string) (string, error) { return msg, nil }
	_ = sqsbatch.NewTx[string, []string](nil, key, effect[string], sqsbatch.Config{})`),
	"eventbridge": txMain("eventbridge", `key := func(e eventbridge.Event[string]) (string, error) { return e.Detail, nil }
	_ = eventbridge.NewTx[string, []string](nil, key, effect[eventbridge.Event[string]], sqsbatch.Config{})`, "sqsbatch"),
	"kinesis": txMain("kinesis", `key := func(msg string) (string, error) { return msg, nil }
	_ = kinesis.NewTx[string, []string](nil, key, effect[string], handler.Batch{})`, "handler"),
	"dynamodbstream": txMain("dynamodbstream", `key := func(c dynamodbstream.Change[string]) (string, error) { return c.Keys, nil }
	_, _ = dynamodbstream.NewTx[string, []string](nil, key, effect[dynamodbstream.Change[string]], dynamodbstream.Config{})`),
}

// txMain is the main package that imports the library's package pkg (and
// others) and runs body with a transactional effect.
func txMain(pkg, body string, others ...string) string {
	imports := fmt.Sprintf("\t%q\n\t%q\n", library+"/lambda/idempotency", library+"/lambda/"+pkg)
	for _, o := range others {
		imports += fmt.Sprintf("\t%q\n", library+"/lambda/"+o)
	}
	return "package main\n\nimport (\n\t\"context\"\n\n" + imports + ")\n\n" +
		"func effect[M any](ctx context.Context, msg M, r idempotency.Reservation) ([]string, string, error) {\n\treturn []string{\"decrement stock\"}, \"\", nil\n}\n\n" +
		"func main() {\n\t" + body + "\n}\n"
}

// WriteLibraryModule writes, in dir, a module whose main.go is mainSrc, on
// this working tree's library (replaced by its checkout), with the
// library's go.sum and the requirements go mod tidy finds in the module
// cache, offline.
func WriteLibraryModule(dir, mainSrc string) error {
	root, err := modroot.OfWorkingDirectory()
	if err != nil {
		return err
	}
	if err := WriteModule(dir, "require "+library+" v0.0.0-00010101000000-000000000000\n\nreplace "+library+" => "+root+"\n", mainSrc); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum")) // the library's dependencies, as the library pins them
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return err
	}
	// The cache may hold modules that no go.sum here lists (a test
	// dependency of a dependency, which another module of the repository
	// downloaded): their checksums are taken from the cache, which verified
	// them when it downloaded them, instead of the checksum database, out of
	// reach here.
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = dir, append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOSUMDB=off")
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %v\n%s", dir, err, out)
	}
	return nil
}
