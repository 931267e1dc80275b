// Command invoice is the "import the uploaded invoice" consumer of the
// example platform, whose source is the uploads bucket's notifications:
// suppliers upload invoices with presigned URLs, and S3 notifies the
// consumer's queue of each object created under invoices/. It imports each
// uploaded object once into the accounting API (POST /invoices); the
// import's id is the stored result.
//
// The key is the handler's default for an S3 record (s3event.ObjectKey):
// the bucket, the decoded key and the object's version (the uploads bucket
// is versioned, so a rewrite of a key is a new version, a fact of its own,
// and a repeated notification of one version is one fact).
//
// INVOICE_API_URL is the accounting API; empty, the handler runs in sandbox
// mode and logs the import it would make.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/idempotent-consumer/idempotent-consumer/app/cmd/internal/provider"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/s3event"
)

func main() {
	i := &importer{provider.NewEffect(os.Getenv("INVOICE_API_URL"), "/invoices", slog.Default())}
	s3event.Start(s3event.ObjectKey, i.importObject)
}

type importer struct{ effect *provider.Effect }

// importObject imports the uploaded object; r.Key is the accounting API's
// idempotency key.
func (i *importer) importObject(ctx context.Context, o s3event.Object, r idempotency.Reservation) (string, error) {
	return i.effect.Do(ctx, r.Key, map[string]any{"bucket": o.Bucket, "key": o.Key, "versionId": o.VersionID, "eTag": o.ETag, "size": o.Size})
}
