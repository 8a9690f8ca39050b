package httpapi

import (
	"testing"
	"time"
)

func TestParseLag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Lag
		bad  bool
	}{
		{in: "0", want: Lag{}},
		{in: "1048576", want: Lag{Bytes: 1 << 20}},
		{in: "16kB", want: Lag{Bytes: 16 << 10}},
		{in: "1MB", want: Lag{Bytes: 1 << 20}},
		{in: "2 GB", want: Lag{Bytes: 2 << 30}},
		{in: "100B", want: Lag{Bytes: 100}},
		{in: "5s", want: Lag{Duration: 5 * time.Second, Seconds: true}},
		{in: "500ms", want: Lag{Duration: 500 * time.Millisecond, Seconds: true}},
		{in: "1m", want: Lag{Duration: time.Minute, Seconds: true}},
		{in: "-1", bad: true},
		{in: "bogus", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseLag(tc.in)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("ParseLag(%q) = %+v, %v; want %+v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
