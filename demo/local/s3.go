package local

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// This file is what the local run knows of S3: the template's buckets
// (AWS::S3::Bucket, with its versioning) and CDK's bucket notifications
// (Custom::S3BucketNotifications, whose QueueConfigurations name the
// consumers' queues), provisioned on kumo's S3, whose PutObject then
// notifies the queues.
//
// kumo v0.33.1 sends a notification for a put into an unversioned bucket
// with no versionId, no sequencer, and no s3:TestEvent when the
// notifications are configured; it escapes the key with QueryEscape ('/'
// as %2F). CDK's handler function of the custom resource is not run: the
// demo applies the resource's configuration itself.

// Bucket is an AWS::S3::Bucket.
type Bucket struct {
	ID        string
	Versioned bool
}

// Notification is a Custom::S3BucketNotifications resource: the queue
// notifications of one bucket.
type Notification struct {
	ID, Bucket string // Bucket: a bucket of the template, by logical id
	Queues     []QueueNotification
}

// QueueNotification is one QueueConfiguration.
type QueueNotification struct {
	Queue          string // logical id
	Events         []string
	Prefix, Suffix string
}

func (s *Stack) addBucket(id string, r resource) error {
	var p struct {
		VersioningConfiguration *struct{ Status string } `json:"VersioningConfiguration"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil && len(r.Properties) > 0 {
		return err
	}
	s.Buckets[id] = &Bucket{ID: id, Versioned: p.VersioningConfiguration != nil && p.VersioningConfiguration.Status == "Enabled"}
	return nil
}

func (s *Stack) addNotification(id string, r resource) error {
	var p struct {
		BucketName                intrinsic `json:"BucketName"`
		NotificationConfiguration struct {
			QueueConfigurations []struct {
				Events   []string  `json:"Events"`
				QueueArn intrinsic `json:"QueueArn"`
				Filter   *struct {
					Key struct {
						FilterRules []struct{ Name, Value string } `json:"FilterRules"`
					} `json:"Key"`
				} `json:"Filter"`
			} `json:"QueueConfigurations"`
		} `json:"NotificationConfiguration"`
	}
	if err := json.Unmarshal(r.Properties, &p); err != nil {
		return err
	}
	bucket, err := p.BucketName.target("")
	if err != nil {
		return fmt.Errorf("BucketName: %w (only a bucket of the template runs locally)", err)
	}
	n := &Notification{ID: id, Bucket: bucket}
	for _, qc := range p.NotificationConfiguration.QueueConfigurations {
		q, err := qc.QueueArn.target("Arn")
		if err != nil {
			return err
		}
		qn := QueueNotification{Queue: q, Events: qc.Events}
		if qc.Filter != nil {
			for _, fr := range qc.Filter.Key.FilterRules {
				switch strings.ToLower(fr.Name) {
				case "prefix":
					qn.Prefix = fr.Value
				case "suffix":
					qn.Suffix = fr.Value
				}
			}
		}
		n.Queues = append(n.Queues, qn)
	}
	s.Notifications = append(s.Notifications, n)
	return nil
}

// checkNotifications refuses a notification of a bucket or to a queue the
// template does not have.
func (s *Stack) checkNotifications() error {
	for _, n := range s.Notifications {
		if s.Buckets[n.Bucket] == nil {
			return fmt.Errorf("notification %s: bucket %s is not in the template", n.ID, n.Bucket)
		}
		for _, q := range n.Queues {
			if s.Queues[q.Queue] == nil {
				return fmt.Errorf("notification %s: queue %s is not in the template", n.ID, q.Queue)
			}
		}
	}
	return nil
}

// bucketName is the local name of the bucket of logical id id (S3 names
// are lower case).
func bucketName(id string) string { return strings.ToLower(id) }

// provisionBuckets creates the template's buckets (with versioning when
// the template enables it) and applies each notification resource's queue
// configurations.
func (d *deployment) provisionBuckets(ctx context.Context, c *clients) error {
	for id, b := range d.stack.Buckets {
		name := bucketName(id)
		if _, err := c.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			return fmt.Errorf("bucket %s: %w", id, err)
		}
		if b.Versioned {
			if _, err := c.s3.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(name),
				VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
				return fmt.Errorf("bucket %s versioning: %w", id, err)
			}
		}
		d.bucketName[id] = name
	}
	for _, n := range d.stack.Notifications {
		var qcs []s3types.QueueConfiguration
		for _, q := range n.Queues {
			qc := s3types.QueueConfiguration{QueueArn: aws.String(d.queueARN[q.Queue])}
			for _, e := range q.Events {
				qc.Events = append(qc.Events, s3types.Event(e))
			}
			var rules []s3types.FilterRule
			if q.Prefix != "" {
				rules = append(rules, s3types.FilterRule{Name: s3types.FilterRuleNamePrefix, Value: aws.String(q.Prefix)})
			}
			if q.Suffix != "" {
				rules = append(rules, s3types.FilterRule{Name: s3types.FilterRuleNameSuffix, Value: aws.String(q.Suffix)})
			}
			if len(rules) > 0 {
				qc.Filter = &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{FilterRules: rules}}
			}
			qcs = append(qcs, qc)
		}
		if _, err := c.s3.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
			Bucket: aws.String(d.bucketName[n.Bucket]), NotificationConfiguration: &s3types.NotificationConfiguration{QueueConfigurations: qcs},
		}); err != nil {
			return fmt.Errorf("notification %s: %w", n.ID, err)
		}
	}
	return nil
}
