package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/orderstest"
	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
)

// TestUploadsImportEachVersionOnce: a repeated notification of one version
// imports nothing again; a rewrite of the key (a new version) is a new
// import; S3's test event is acknowledged.
func TestUploadsImportEachVersionOnce(t *testing.T) {
	api := orderstest.NewAPI(t)
	i := &importer{provider.NewEffect(api.URL, "/invoices", slog.Default())}
	h, err := s3event.FromEnv(s3event.ObjectKey, i.importObject, orderstest.Options(contract.S3)...)
	if err != nil {
		t.Fatal(err)
	}
	put := func(version, sequencer string) string {
		return `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"eu-west-1","eventTime":"` + orderstest.SentText() + `","eventName":"ObjectCreated:Put",` +
			`"s3":{"bucket":{"name":"uploads","arn":"arn:aws:s3:::uploads"},"object":{"key":"invoices/acme+2026%2F12.pdf","size":42,"eTag":"e1","versionId":"` + version + `","sequencer":"` + sequencer + `"}}}]}`
	}
	for n, body := range []string{
		`{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"` + orderstest.SentText() + `","Bucket":"uploads","RequestId":"r","HostId":"h"}`,
		put("v1", "0A"), put("v1", "0A"), put("v2", "0B"),
	} {
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: body}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("message %d: %+v, %v", n, resp, err)
		}
	}
	want := map[string]int{"example#uploads/invoices/acme 2026/12.pdf@v1": 1, "example#uploads/invoices/acme 2026/12.pdf@v2": 1}
	if got := api.Effects(); len(got) != 2 || got["example#uploads/invoices/acme 2026/12.pdf@v1"] != 1 || got["example#uploads/invoices/acme 2026/12.pdf@v2"] != 1 {
		t.Errorf("imports %v, want %v", got, want)
	}
}
