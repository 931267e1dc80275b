package consumer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/family"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/ids"
	"github.com/idempotent-consumer/idempotent-consumer/constructs/internal/nag"
)

// Metadata keys of a notification claim.
const (
	notificationMetadata = "idempotent-consumer:notification"
)

// queueDestination is the bucket notification's destination: the
// consumer's queue, once its policy lets S3 send (the notification
// depends on the policy, since S3 checks the destination when the
// notification is configured).
type queueDestination struct {
	queue      awssqs.IQueue
	dependency constructs.IDependable
}

// Bind implements awss3.IBucketNotificationDestination.
func (d *queueDestination) Bind(_ constructs.Construct, _ interfacesawss3.IBucketRef) *awss3.BucketNotificationDestinationConfig {
	cfg := &awss3.BucketNotificationDestinationConfig{
		Arn:  d.queue.QueueArn(),
		Type: awss3.BucketNotificationDestinationType_QUEUE,
	}
	if d.dependency != nil {
		cfg.Dependencies = &[]constructs.IDependable{d.dependency}
	}
	return cfg
}

// addNotifications lets S3 send to the queue from the bucket of the
// account, lets it use a customer-managed key, and adds a notification per
// event type and filter (CDK's Custom::S3BucketNotifications, in the
// bucket's stack).
func (c *idempotentConsumer) addNotifications(s *settings) {
	src := s.source
	if err := c.claimNotifications(src); err != nil {
		panic(fmt.Errorf("IdempotentConsumer %q: %w", s.ID, err))
	}
	account := src.bucket.Env().Account
	// S3's guidance for a queue destination: the bucket's ARN and its
	// owner's account (ways-to-add-notification-config-to-bucket,
	// grant-destinations-permissions-to-s3).
	res := c.queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("S3BucketNotifies"),
		Effect:     awsiam.Effect_ALLOW,
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("s3.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sqs:SendMessage"),
		Resources:  jsii.Strings(*c.queue.QueueArn()),
		Conditions: &map[string]any{
			"ArnLike":      map[string]any{"aws:SourceArn": src.bucket.BucketArn()},
			"StringEquals": map[string]any{"aws:SourceAccount": account},
		},
	}))
	// S3 encrypts what it sends with the queue's key. S3's guidance gives
	// the statement no condition; the queue policy above is what limits
	// the sender to the bucket.
	for _, key := range queueKeys(c.queue) {
		key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("S3NotificationsEncrypt"),
			Effect:     awsiam.Effect_ALLOW,
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("s3.amazonaws.com"), nil)},
			Actions:    jsii.Strings("kms:GenerateDataKey*", "kms:Decrypt"),
			Resources:  jsii.Strings("*"),
		}), jsii.Bool(true))
	}
	dest := &queueDestination{queue: c.queue}
	if res != nil && res.PolicyDependable != nil {
		dest.dependency = res.PolicyDependable
	}
	filters := src.bucketFilters
	if len(filters) == 0 {
		filters = []*awss3.NotificationKeyFilter{nil}
	}
	for _, event := range src.bucketEvents {
		for _, f := range filters {
			if f == nil {
				src.bucket.AddEventNotification(event, dest)
			} else {
				src.bucket.AddEventNotification(event, dest, f)
			}
		}
	}
	suppressNotificationsHandler(awscdk.Stack_Of(src.bucket))
}

// notificationsHandlerFindings are the cdk-nag rules CDK's bucket-notifications
// handler breaks, and why each is CDK's to fix: the function is CDK's own
// code, which CloudFormation invokes when it deploys the notifications.
var notificationsHandlerFindings = []nag.Rule{
	{ID: "AwsSolutions-L1", Reason: "CDK's bucket-notifications handler (Custom::S3BucketNotifications) is CDK's inline code on the runtime aws-cdk-lib chooses for it; the app cannot change its code, and a newer aws-cdk-lib moves it to a newer runtime."},
	{ID: "Serverless-LambdaLatestVersion", Reason: "CDK's bucket-notifications handler runs on the runtime aws-cdk-lib chooses for its inline code; a newer aws-cdk-lib moves it."},
	{ID: "Serverless-LambdaDLQ", Reason: "CDK's bucket-notifications handler is invoked synchronously by CloudFormation, which reports a failure as the deployment's: there is no asynchronous event to dead-letter."},
	{ID: "Serverless-LambdaDefaultMemorySize", Reason: "CDK's bucket-notifications handler is CDK's code, sized by aws-cdk-lib; it runs once per deployment that changes a bucket's notifications."},
	{ID: "Serverless-LambdaTracing", Reason: "CDK's bucket-notifications handler is CDK's code, without the X-Ray SDK; it runs once per deployment that changes a bucket's notifications, and CloudFormation's events trace it."},
}

// suppressNotificationsHandler gives the function and role of CDK's
// Custom::S3BucketNotifications (one per stack,
// BucketNotificationsHandler050a0587b7544547bf325f094a3db834) the reason
// of their cdk-nag findings (CDK's own code, which the app cannot change),
// and the log retention CDK leaves out: a log group of the stack
// (ids.NotificationsHandlerLogs, family.DefaultLogRetention), which the function
// logs to (its LoggingConfig), instead of one Lambda creates that never
// expires.
func suppressNotificationsHandler(stack awscdk.Stack) {
	h, ok := stack.Node().TryFindChild(jsii.String("BucketNotificationsHandler050a0587b7544547bf325f094a3db834")).(constructs.Construct)
	if !ok || stack.Node().TryFindChild(jsii.String(ids.NotificationsHandlerLogs)) != nil {
		return // none, or done for this stack
	}
	logs := awslogs.NewLogGroup(stack, jsii.String(ids.NotificationsHandlerLogs), &awslogs.LogGroupProps{Retention: family.DefaultLogRetention})
	if fn, ok := h.Node().TryFindChild(jsii.String("Resource")).(awscdk.CfnResource); ok {
		fn.AddPropertyOverride(jsii.String("LoggingConfig.LogGroup"), logs.LogGroupName())
	}
	nag.Suppress(h, true, append([]nag.Rule{
		{ID: "AwsSolutions-IAM4", Reason: "CDK's bucket-notifications handler (Custom::S3BucketNotifications) is CDK's code and role: its role has the AWSLambdaBasicExecutionRole managed policy, for its own logs only; its s3:PutBucketNotification statements name the buckets.",
			AppliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}},
	}, notificationsHandlerFindings...)...)
}

// notification is one notification of a consumer: an event type and a key
// filter ("" prefix or suffix: any).
type notification struct {
	event, prefix, suffix string
}

// s3EventNames are the S3 event types of awss3.EventType's values, as S3
// names them (S3 User Guide, notification-how-to-event-types-and-destinations).
var s3EventNames = map[awss3.EventType]string{
	awss3.EventType_OBJECT_CREATED:                                   "s3:ObjectCreated:*",
	awss3.EventType_OBJECT_CREATED_PUT:                               "s3:ObjectCreated:Put",
	awss3.EventType_OBJECT_CREATED_POST:                              "s3:ObjectCreated:Post",
	awss3.EventType_OBJECT_CREATED_COPY:                              "s3:ObjectCreated:Copy",
	awss3.EventType_OBJECT_CREATED_COMPLETE_MULTIPART_UPLOAD:         "s3:ObjectCreated:CompleteMultipartUpload",
	awss3.EventType_OBJECT_REMOVED:                                   "s3:ObjectRemoved:*",
	awss3.EventType_OBJECT_REMOVED_DELETE:                            "s3:ObjectRemoved:Delete",
	awss3.EventType_OBJECT_REMOVED_DELETE_MARKER_CREATED:             "s3:ObjectRemoved:DeleteMarkerCreated",
	awss3.EventType_OBJECT_RESTORE:                                   "s3:ObjectRestore:*",
	awss3.EventType_OBJECT_RESTORE_POST:                              "s3:ObjectRestore:Post",
	awss3.EventType_OBJECT_RESTORE_COMPLETED:                         "s3:ObjectRestore:Completed",
	awss3.EventType_OBJECT_RESTORE_DELETE:                            "s3:ObjectRestore:Delete",
	awss3.EventType_REDUCED_REDUNDANCY_LOST_OBJECT:                   "s3:ReducedRedundancyLostObject",
	awss3.EventType_REPLICATION:                                      "s3:Replication:*",
	awss3.EventType_REPLICATION_OPERATION_FAILED_REPLICATION:         "s3:Replication:OperationFailedReplication",
	awss3.EventType_REPLICATION_OPERATION_MISSED_THRESHOLD:           "s3:Replication:OperationMissedThreshold",
	awss3.EventType_REPLICATION_OPERATION_REPLICATED_AFTER_THRESHOLD: "s3:Replication:OperationReplicatedAfterThreshold",
	awss3.EventType_REPLICATION_OPERATION_NOT_TRACKED:                "s3:Replication:OperationNotTracked",
	awss3.EventType_LIFECYCLE_EXPIRATION:                             "s3:LifecycleExpiration:*",
	awss3.EventType_LIFECYCLE_EXPIRATION_DELETE:                      "s3:LifecycleExpiration:Delete",
	awss3.EventType_LIFECYCLE_EXPIRATION_DELETE_MARKER_CREATED:       "s3:LifecycleExpiration:DeleteMarkerCreated",
	awss3.EventType_LIFECYCLE_TRANSITION:                             "s3:LifecycleTransition",
	awss3.EventType_INTELLIGENT_TIERING:                              "s3:IntelligentTiering",
	awss3.EventType_OBJECT_TAGGING:                                   "s3:ObjectTagging:*",
	awss3.EventType_OBJECT_TAGGING_PUT:                               "s3:ObjectTagging:Put",
	awss3.EventType_OBJECT_TAGGING_DELETE:                            "s3:ObjectTagging:Delete",
	awss3.EventType_OBJECT_ACL_PUT:                                   "s3:ObjectAcl:Put",
}

// s3EventName is e as S3 names it (e itself for a value the table does
// not know, which overlaps only itself).
func s3EventName(e awss3.EventType) string {
	if n, ok := s3EventNames[e]; ok {
		return n
	}
	return string(e)
}

// notificationsOf are the notifications of events × filters.
func notificationsOf(events []awss3.EventType, filters []*awss3.NotificationKeyFilter) []notification {
	var ns []notification
	for _, e := range events {
		if len(filters) == 0 {
			ns = append(ns, notification{event: s3EventName(e)})
		}
		for _, f := range filters {
			ns = append(ns, notification{event: s3EventName(e), prefix: family.Str(f.Prefix, ""), suffix: family.Str(f.Suffix, "")})
		}
	}
	return ns
}

// overlaps says whether S3 would refuse a and b on one bucket: their event
// types overlap (one, or a wildcard that covers the other), and so do
// their prefixes (one starts the other) and their suffixes (one ends the
// other). S3 User Guide, notification-how-to-filtering: "overlapping
// prefixes and suffixes … for the same event type" are refused.
func (a notification) overlaps(b notification) bool {
	events := a.event == b.event || covers(a.event, b.event) || covers(b.event, a.event)
	prefixes := strings.HasPrefix(a.prefix, b.prefix) || strings.HasPrefix(b.prefix, a.prefix)
	suffixes := strings.HasSuffix(a.suffix, b.suffix) || strings.HasSuffix(b.suffix, a.suffix)
	return events && prefixes && suffixes
}

// covers says whether the event type wildcard w ("s3:ObjectCreated:*")
// covers e.
func covers(w, e string) bool {
	return strings.HasSuffix(w, ":*") && strings.HasPrefix(e, strings.TrimSuffix(w, "*"))
}

func (n notification) String() string {
	return fmt.Sprintf("%s (prefix %q, suffix %q)", n.event, n.prefix, n.suffix)
}

// overlapProblems refuses the consumer's own notifications that overlap.
func overlapProblems(events []awss3.EventType, filters []*awss3.NotificationKeyFilter) []string {
	var problems []string
	ns := notificationsOf(events, filters)
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			if ns[i].overlaps(ns[j]) {
				problems = append(problems, fmt.Sprintf("BucketEvents and BucketFilters give two notifications that overlap, %s and %s, and S3 refuses overlapping prefixes and suffixes for one event type (the deployment would fail); give filters whose prefixes or suffixes do not overlap, or one event type that covers both", ns[i], ns[j]))
			}
		}
	}
	return problems
}

// bucketKey is how the claims know a bucket: its name when known at synth,
// else its construct.
func bucketKey(b awss3.IBucket) string {
	name := b.BucketName()
	if cfn, ok := b.Node().DefaultChild().(awss3.CfnBucket); ok {
		name = cfn.BucketName()
	}
	if name != nil && *name != "" && !*awscdk.Token_IsUnresolved(name) {
		return "bucket " + *name
	}
	return "construct " + *b.Node().Addr()
}

// claimNotifications checks the bucket's Region against the consumer's
// and claims the consumer's notifications on the bucket, or says which
// consumer of the app holds one that overlaps.
func (c *idempotentConsumer) claimNotifications(src source) error {
	if region := src.bucket.Env().Region; region != nil && !*awscdk.Token_IsUnresolved(region) {
		if here := awscdk.Stack_Of(c).Region(); here != nil && !*awscdk.Token_IsUnresolved(here) && *here != *region {
			return fmt.Errorf("Bucket is in Region %s and the consumer's queue in %s, but S3 sends notifications only to a queue of the bucket's Region (and CDK attaches them in the bucket's stack); create the consumer in a stack of %s, or send the events on through EventBridge", *region, *here, *region)
		}
	}
	root, ok := c.Node().Root().(constructs.Construct)
	if !ok {
		return nil
	}
	h, ok := root.Node().TryFindChild(jsii.String(ids.BucketNotifications)).(constructs.Construct)
	if !ok {
		h = constructs.NewConstruct(root, jsii.String(ids.BucketNotifications))
	}
	key := bucketKey(src.bucket)
	mine := notificationsOf(src.bucketEvents, src.bucketFilters)
	for _, child := range *h.Node().Children() {
		for _, m := range *child.Node().Metadata() {
			if *m.Type != notificationMetadata {
				continue
			}
			v, _ := m.Data.(map[string]any)
			if v["bucket"] != key {
				continue
			}
			other := notification{event: fmt.Sprint(v["event"]), prefix: fmt.Sprint(v["prefix"]), suffix: fmt.Sprint(v["suffix"])}
			for _, n := range mine {
				if n.overlaps(other) {
					return fmt.Errorf("its notification %s on the bucket overlaps %s of consumer %s, and S3 refuses overlapping prefixes and suffixes for one event type; give the consumers filters whose prefixes or suffixes do not overlap, or one consumer", n, other, v["consumer"])
				}
			}
		}
	}
	for _, n := range mine {
		sum := sha256.Sum256([]byte(key + "\x00" + *c.Node().Path() + "\x00" + n.String()))
		claim := constructs.NewConstruct(h, jsii.String(hex.EncodeToString(sum[:16])))
		claim.Node().AddMetadata(jsii.String(notificationMetadata), map[string]any{
			"bucket": key, "consumer": *c.Node().Path(), "event": n.event, "prefix": n.prefix, "suffix": n.suffix,
		}, nil)
	}
	return nil
}
