package ops_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/ops"
)

// point is one metric value at a time, as CloudWatch holds it.
type point struct {
	metric string
	at     time.Time
	value  float64
}

// cloudWatchRule answers GetMetricData as CloudWatch does for
// regular-resolution metrics: a query whose start time is more than 15 days
// back gets no data point unless its period is a multiple of 300 s, more
// than 63 days back a multiple of 3600 s
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricStat.html);
// otherwise each query's one data point sums the points in [start, end).
func cloudWatchRule(t *testing.T, points []point) func(op string, body []byte) string {
	return func(op string, body []byte) string {
		if op != "GetMetricData" {
			return ""
		}
		v, err := cbor.Decode(body)
		if err != nil {
			t.Errorf("GetMetricData body: %v", err)
			return ""
		}
		in := v.(cbor.Map)
		start, err1 := cbor.AsTime(in["StartTime"])
		end, err2 := cbor.AsTime(in["EndTime"])
		if err1 != nil || err2 != nil {
			t.Errorf("GetMetricData times: %v, %v", err1, err2)
			return ""
		}
		var results []string
		for _, q := range in["MetricDataQueries"].(cbor.List) {
			q := q.(cbor.Map)
			stat := q["MetricStat"].(cbor.Map)
			name := string(stat["Metric"].(cbor.Map)["MetricName"].(cbor.String))
			checkDimensions(t, stat["Metric"].(cbor.Map)["Dimensions"])
			period, _ := cbor.AsInt32(stat["Period"])
			id := string(q["Id"].(cbor.String))
			if !periodAccepted(time.Now(), start, period) {
				results = append(results, `{"Id":"`+id+`","Values":[],"StatusCode":"Complete"}`)
				continue
			}
			var sum float64
			var found bool
			for _, p := range points {
				if p.metric == name && !p.at.Before(start) && p.at.Before(end) {
					sum, found = sum+p.value, true
				}
			}
			values := "[]"
			if found {
				values = fmt.Sprintf("[%g]", sum)
			}
			results = append(results, `{"Id":"`+id+`","Values":`+values+`,"StatusCode":"Complete"}`)
		}
		return `{"MetricDataResults":[` + strings.Join(results, ",") + `]}`
	}
}

// checkDimensions fails t unless a query's dimensions are the ones the
// runtime writes: the consumer and the Region of the command's clients.
func checkDimensions(t *testing.T, v cbor.Value) {
	t.Helper()
	got := map[string]string{}
	list, _ := v.(cbor.List)
	for _, d := range list {
		d := d.(cbor.Map)
		got[string(d["Name"].(cbor.String))] = string(d["Value"].(cbor.String))
	}
	if len(got) != 2 || got[outcome.MetricDimension] == "" || got[outcome.RegionDimension] != "us-east-1" {
		t.Errorf("GetMetricData dimensions %v; want the consumer's and the Region's (us-east-1), as the runtime writes them", got)
	}
}

// periodAccepted is CloudWatch's rule for a period given a start time.
func periodAccepted(now, start time.Time, period int32) bool {
	switch age := now.Sub(start); {
	case age > 63*24*time.Hour:
		return period%3600 == 0
	case age > 15*24*time.Hour:
		return period%300 == 0
	}
	return period%60 == 0
}

func TestStatsPeriodIsOneCloudWatchAccepts(t *testing.T) {
	now := time.Now()
	points := []point{
		{"Processed", now.Add(-360*time.Hour - 15*time.Second), 5}, // 15 days and 15 s back
		{"Processed", now.Add(-1000 * time.Hour), 11},              // older than 41 days
		{"Duplicate", now.Add(-time.Hour), 2},
	}
	// The rule can fail: the period stats used to ask (the whole --since,
	// in minutes) gets nothing for 360h30s.
	if periodAccepted(now, now.Add(-(360*time.Hour + 30*time.Second)), int32((360*time.Hour+time.Minute)/time.Second)) {
		t.Fatal("the simulated rule accepts a 21601-minute period starting 15 days and 30 s back")
	}
	for _, c := range []struct {
		since           string
		processed, dups float64
		granularity     int32
	}{
		{"6h", 0, 2, 60},
		{"300h", 0, 2, 60},
		{"360h30s", 5, 2, 300},
		{"400h", 5, 2, 300},
		{"1600h", 16, 2, 3600},
	} {
		t.Run(c.since, func(t *testing.T) {
			r := newReplay(t, nil)
			r.answer = cloudWatchRule(t, points)
			status, out, _ := r.run("stats", "--json", "--since", c.since)
			var st ops.Stats
			if err := json.Unmarshal([]byte(out), &st); err != nil || status != ops.ExitOK {
				t.Fatalf("stats: exit %d, %v", status, err)
			}
			since, _ := time.ParseDuration(c.since)
			if st.NoData || st.Counts["Processed"] != c.processed || st.Counts["Duplicate"] != c.dups {
				t.Errorf("since %s: counts %v, no data %v; want Processed %g, Duplicate %g", c.since, st.Counts, st.NoData, c.processed, c.dups)
			}
			if st.PeriodSeconds%c.granularity != 0 || st.From.Unix()%int64(c.granularity) != 0 ||
				st.To.Sub(st.From) < since-time.Minute || time.Duration(st.PeriodSeconds)*time.Second < st.To.Sub(st.From) {
				t.Errorf("since %s: from %s to %s, period %d s: want a multiple of %d s covering the period", c.since, st.From, st.To, st.PeriodSeconds, c.granularity)
			}
		})
	}
}

// TestStatsSince400hInWords: the operator's view of a period that starts
// more than 15 days back, with data there.
func TestStatsSince400hInWords(t *testing.T) {
	r := newReplay(t, nil)
	r.answer = cloudWatchRule(t, []point{{"Processed", time.Now().Add(-390 * time.Hour), 5}, {"Duplicate", time.Now().Add(-time.Hour), 2}})
	status, out, _ := r.run("stats", "--since", "400h")
	if status != ops.ExitOK || !strings.Contains(out, "(one period of ") || strings.Contains(out, "no data") ||
		!regexp.MustCompile(`Processed +5\n`).MatchString(out) || !regexp.MustCompile(`Duplicate +2\n`).MatchString(out) {
		t.Errorf("stats --since 400h: exit %d\n%s", status, out)
	}
}

func TestStatsSaysWhenThereIsNoData(t *testing.T) {
	r := newReplay(t, nil)
	r.answer = cloudWatchRule(t, nil)
	status, out, _ := r.run("stats", "--since", "400h")
	if status != ops.ExitOK || !strings.Contains(out, "no data: CloudWatch has no data point") || strings.Contains(out, "Processed  ") {
		t.Errorf("stats with no data: exit %d\n%s", status, out)
	}
	r = newReplay(t, nil)
	r.answer = cloudWatchRule(t, nil)
	_, out, _ = r.run("stats", "--json", "--since", "400h")
	var st ops.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil || !st.NoData {
		t.Errorf("stats --json with no data: %v, %s", err, out)
	}
	if status, _, errOut := newReplay(t, nil).run("stats", "--since", "11000h"); status != ops.ExitUsage || !strings.Contains(errOut, "455 days") {
		t.Errorf("stats --since 11000h (beyond what CloudWatch keeps): exit %d, %s", status, errOut)
	}
	r = newReplay(t, nil)
	r.answer = cloudWatchRule(t, []point{{"Failed", time.Now().Add(-time.Hour), 1}})
	if _, out, _ = r.run("stats", "--since", "400h"); strings.Contains(out, "no data") {
		t.Errorf("stats with data says no data:\n%s", out)
	}
}
