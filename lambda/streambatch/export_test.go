package streambatch

var ErrAggregate = errAggregate
var ReportedSequenceNumber = reportedSequenceNumber
