// Package dynalite starts a dynalite server (a DynamoDB-compatible server,
// installed from npm by `make tools`) on a free loopback port for tests.
package dynalite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/schema"
)

// Server is a running dynalite.
type Server struct {
	// URL is the server's endpoint, http://127.0.0.1:<port>.
	URL    string
	tables atomic.Int64
}

// Start starts dynalite for the duration of the test binary's test t and
// returns it; the server is stopped when t ends. It fails t if dynalite is
// not installed (run `make tools`).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := find()
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dynalite: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("dynalite exited before listening on %s: %v", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("dynalite did not listen on %s within 20s", addr)
		}
	}
	return &Server{URL: "http://" + addr}
}

// Client returns a DynamoDB client for the server, with dummy credentials.
func (s *Server) Client() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(s.URL),
		Region:       "us-east-1",
		Credentials:  staticCreds{},
	})
}

// NewTable creates a new idempotency table (string partition key "pk") and
// returns its name.
func (s *Server) NewTable(t testing.TB) string {
	t.Helper()
	return s.NewTableKeyed(t, schema.Key, "")
}

// NewTableKeyed creates a new table with a string partition key named
// partition and, unless sort is "", a string sort key named sort (a table
// of an app's own design), and returns its name.
func (s *Server) NewTableKeyed(t testing.TB, partition, sort string) string {
	t.Helper()
	name := fmt.Sprintf("idempotency-%d", s.tables.Add(1))
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(partition), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(partition), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}
	if sort != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(sort), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange})
	}
	_, err := s.Client().CreateTable(context.Background(), in)
	if err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	// Even with --createTableMs 0 the table becomes ACTIVE asynchronously.
	w := dynamodb.NewTableExistsWaiter(s.Client(), func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond })
	if err := w.Wait(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 10*time.Second); err != nil {
		t.Fatalf("table %s not active: %v", name, err)
	}
	return name
}

type staticCreds struct{}

func (staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "dynalite"}, nil
}

// find returns the dynalite executable: $DYNALITE, or node_modules/.bin/dynalite
// in the working directory or one of its parents.
func find() (string, error) {
	if p := os.Getenv("DYNALITE"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "node_modules", ".bin", "dynalite")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("dynalite is not installed: run `make tools` (npm ci) at the repository root, or set DYNALITE")
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
