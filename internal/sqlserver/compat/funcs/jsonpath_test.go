package funcs

import (
	"encoding/json"
	"testing"
)

// Simple paths reach what MySQL's do; others are left to go-mysql-server.
func TestJSONPath(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a": [10, 20, {"b": "x"}], "c d": 1, "s": "str"}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want string // JSON of the value, "none" for no match
	}{
		{"$.a[1]", "20"},
		{"$.a[last]", `{"b":"x"}`},
		{"$.a[last - 1]", "20"},
		{"$.a[last-3]", "none"},
		{"$.a[2].b", `"x"`},
		{`$."c d"`, "1"},
		{"$.s[0]", `"str"`},
		{"$.s[1]", "none"},
		{"$.a.b", "none"},
		{"$[0].s", `"str"`},
		{"$", `{"a":[10,20,{"b":"x"}],"c d":1,"s":"str"}`},
	} {
		legs, ok := parseJSONPath(c.path)
		if !ok {
			t.Errorf("%s: not read", c.path)
			continue
		}
		v, found := doc, true
		for _, l := range legs {
			if v, found = l.step(v); !found {
				break
			}
		}
		got := "none"
		if found {
			b, _ := json.Marshal(v)
			got = string(b)
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.path, got, c.want)
		}
	}
	for _, p := range []string{"$.a[*]", "$**.b", "$.*", "$.a[0 to 1]", "a", `$."a\"b"`} {
		if _, ok := parseJSONPath(p); ok {
			t.Errorf("%s: read, want it left to go-mysql-server", p)
		}
	}
}
