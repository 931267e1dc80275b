package streampoll

import (
	"context"
	"encoding/json"
)

// DynamoDBStreams is the stream of arn on the DynamoDB Streams API at url
// (its shards as DescribeStream lists them now). Its records are Lambda's
// event records field for field.
func DynamoDBStreams(ctx context.Context, url, arn string) (Stream, error) {
	api := API{URL: url, Target: "DynamoDBStreams_20120810"}
	var sd struct {
		StreamDescription struct{ Shards []struct{ ShardId string } }
	}
	if err := api.Call(ctx, "DescribeStream", map[string]any{"StreamArn": arn}, &sd); err != nil {
		return Stream{}, err
	}
	s := Stream{
		Iterator: func(ctx context.Context, shard string, pos Position) (string, error) {
			in := map[string]any{"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}
			if pos.Sequence != "" {
				in["ShardIteratorType"], in["SequenceNumber"] = "AT_SEQUENCE_NUMBER", pos.Sequence
				if pos.After {
					in["ShardIteratorType"] = "AFTER_SEQUENCE_NUMBER"
				}
			}
			var out struct{ ShardIterator string }
			err := api.Call(ctx, "GetShardIterator", in, &out)
			return out.ShardIterator, err
		},
		Read: func(ctx context.Context, it string) ([]json.RawMessage, string, error) {
			var out struct {
				Records           []json.RawMessage
				NextShardIterator string
			}
			err := api.Call(ctx, "GetRecords", map[string]any{"ShardIterator": it, "Limit": 1000}, &out)
			return out.Records, out.NextShardIterator, err
		},
		Sequence: func(r json.RawMessage) string {
			var v struct {
				Dynamodb struct{ SequenceNumber string }
			}
			_ = json.Unmarshal(r, &v)
			return v.Dynamodb.SequenceNumber
		},
	}
	for _, sh := range sd.StreamDescription.Shards {
		s.Shards = append(s.Shards, sh.ShardId)
	}
	return s, nil
}

// Kinesis is the data stream name on the Kinesis API at url (its shards as
// ListShards lists them now). Its records are GetRecords': KinesisEvent
// turns them into Lambda's event records.
func Kinesis(ctx context.Context, url, name string) (Stream, error) {
	api := API{URL: url, Target: "Kinesis_20131202"}
	var ls struct{ Shards []struct{ ShardId string } }
	if err := api.Call(ctx, "ListShards", map[string]any{"StreamName": name}, &ls); err != nil {
		return Stream{}, err
	}
	s := Stream{
		Iterator: func(ctx context.Context, shard string, pos Position) (string, error) {
			in := map[string]any{"StreamName": name, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}
			if pos.Sequence != "" {
				in["ShardIteratorType"], in["StartingSequenceNumber"] = "AT_SEQUENCE_NUMBER", pos.Sequence
				if pos.After {
					in["ShardIteratorType"] = "AFTER_SEQUENCE_NUMBER"
				}
			}
			var out struct{ ShardIterator string }
			err := api.Call(ctx, "GetShardIterator", in, &out)
			return out.ShardIterator, err
		},
		Read: func(ctx context.Context, it string) ([]json.RawMessage, string, error) {
			var out struct {
				Records           []json.RawMessage
				NextShardIterator string
			}
			err := api.Call(ctx, "GetRecords", map[string]any{"ShardIterator": it, "Limit": 1000}, &out)
			return out.Records, out.NextShardIterator, err
		},
		Sequence: func(r json.RawMessage) string {
			var v struct{ SequenceNumber string }
			_ = json.Unmarshal(r, &v)
			return v.SequenceNumber
		},
	}
	for _, sh := range ls.Shards {
		s.Shards = append(s.Shards, sh.ShardId)
	}
	return s, nil
}

// KinesisEvent is the Lambda event of a batch of Kinesis GetRecords
// records, as Lambda writes it (the data stays base64, as in GetRecords'
// JSON).
func KinesisEvent(shard string, batch []json.RawMessage) ([]byte, error) {
	recs := make([]map[string]any, 0, len(batch))
	for _, raw := range batch {
		var r struct {
			Data, PartitionKey, SequenceNumber string
			ApproximateArrivalTimestamp        float64
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		recs = append(recs, map[string]any{
			"eventSource": "aws:kinesis", "eventID": shard + ":" + r.SequenceNumber, "eventName": "aws:kinesis:record", "eventVersion": "1.0",
			"kinesis": map[string]any{"kinesisSchemaVersion": "1.0", "partitionKey": r.PartitionKey, "sequenceNumber": r.SequenceNumber, "data": r.Data, "approximateArrivalTimestamp": r.ApproximateArrivalTimestamp},
		})
	}
	return json.Marshal(map[string]any{"Records": recs})
}

// DynamoDBEvent is the Lambda event of a batch of DynamoDB Streams
// GetRecords records, which are Lambda's event records field for field.
func DynamoDBEvent(batch []json.RawMessage) ([]byte, error) {
	return json.Marshal(map[string]any{"Records": batch})
}
