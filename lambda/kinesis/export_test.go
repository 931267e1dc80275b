package kinesis

var ErrAggregate = errAggregate
