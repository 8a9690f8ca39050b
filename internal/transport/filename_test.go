package transport

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckFileName(t *testing.T) {
	ok := []string{"shop.mjl", "seg-000001.log", "a b c.dat", "T$1_x", "CONSOLE.txt", "com10", "lob.0001", "x.y.z"}
	for _, n := range ok {
		if err := CheckFileName(n); err != nil {
			t.Errorf("CheckFileName(%q) = %v", n, err)
		}
	}
	bad := map[string]string{
		"":                       "empty",
		"../etc/passwd":          "path separator",
		"a/b":                    "path separator",
		`a\b`:                    "path separator",
		"C:x":                    "':'",
		"file.txt:stream":        "':'",
		".hidden":                "starts with a dot",
		" lead":                  "starts with a dot or a space",
		"trail.":                 "ends with a dot",
		"trail ":                 "ends with a dot or a space",
		"..":                     "starts with a dot",
		"CON":                    "Windows device",
		"nul.txt":                "Windows device",
		"Com1.tar.gz":            "Windows device",
		"LPT9":                   "Windows device",
		"aux .log":               "Windows device",
		"é.txt":                  "byte 0xc3",
		"tab\tname":              "byte 0x09",
		"nul\x00byte":            "byte 0x00",
		strings.Repeat("a", 256): "at most 255",
	}
	for n, want := range bad {
		err := CheckFileName(n)
		if !errors.Is(err, ErrFileName) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFileName(%q) = %v, want %q", n, err, want)
		}
	}
}

// FuzzCheckFileName: whatever is accepted is a plain name that cannot
// leave its folder.
func FuzzCheckFileName(f *testing.F) {
	for _, s := range []string{"shop.mjl", "../x", "CON", "a:b", " x", "x."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckFileName(name) != nil {
			return
		}
		if strings.ContainsAny(name, `/\:`) || name == "." || name == ".." || strings.HasPrefix(name, ".") ||
			strings.HasSuffix(name, " ") || strings.HasSuffix(name, ".") || len(name) > maxFileNameBytes {
			t.Fatalf("accepted %q", name)
		}
	})
}
