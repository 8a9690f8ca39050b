package metrics

import (
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/storage"
)

// gathered maps "name{label=value,…}" (labels in the registry's order) to
// the value of each gauge and counter of m.
func gathered(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.Metric {
			key := f.GetName()
			if len(s.Label) > 0 {
				key += "{"
				for i, l := range s.Label {
					if i > 0 {
						key += ","
					}
					key += l.GetName() + "=" + l.GetValue()
				}
				key += "}"
			}
			switch f.GetType().String() {
			case "GAUGE":
				out[key] = s.Gauge.GetValue()
			case "COUNTER":
				out[key] = s.Counter.GetValue()
			}
		}
	}
	return out
}

// The streamed-transaction counters of SHOW GLOBAL STATUS are counters;
// the open transactions are gauges per database and origin, zero for a
// database without any.
func TestStreamMetrics(t *testing.T) {
	began := time.Now().Add(-5 * time.Second)
	m := New(Source{
		Status: func() []Value {
			return []Value{{Name: "Miraj_streamed_transactions", Value: uint64(3)}, {Name: "Miraj_streamed_bytes", Value: uint64(3 << 20)}}
		},
		Streams: func() map[string][]storage.StreamInfo {
			return map[string][]storage.StreamInfo{
				"shop": {
					{Txn: 7, Local: true, Start: 100, Bytes: 1 << 20, Rows: 10, Began: began},
					{Txn: 9, Local: true, Start: 200, Bytes: 2 << 20, Rows: 20, Began: time.Now()},
					{Txn: 8, Start: 150, Bytes: 512, Rows: 1, Began: time.Now(), Applying: true},
				},
				"empty": nil,
			}
		},
	})
	got := gathered(t, m)
	for key, want := range map[string]float64{
		"miraj_streamed_transactions_total":                             3,
		"miraj_streamed_bytes_total":                                    3 << 20,
		"miraj_stream_open_transactions{database=shop,origin=local}":    2,
		"miraj_stream_open_bytes{database=shop,origin=local}":           3 << 20,
		"miraj_stream_open_rows{database=shop,origin=local}":            30,
		"miraj_stream_open_transactions{database=shop,origin=received}": 1,
		"miraj_stream_open_bytes{database=shop,origin=received}":        512,
		"miraj_stream_open_transactions{database=empty,origin=local}":   0,
		"miraj_stream_open_bytes{database=empty,origin=received}":       0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if age := got["miraj_stream_oldest_age_seconds{database=shop,origin=local}"]; age < 5 || age > 60 {
		t.Errorf("oldest local age %v, want about 5 s", age)
	}
	if _, ok := got["miraj_stream_oldest_age_seconds{database=empty,origin=local}"]; ok {
		t.Error("an age for a database without open transactions")
	}
}
