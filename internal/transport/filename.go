package transport

import (
	"errors"
	"fmt"
	"strings"
)

// maxFileNameBytes is the longest name most file systems store (NAME_MAX).
const maxFileNameBytes = 255

// ErrFileName marks a file name refused by CheckFileName.
var ErrFileName = errors.New("transport: file name refused")

// windowsDevices are names Windows resolves to devices whatever the folder
// or extension (CON, CON.txt…).
var windowsDevices = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM0": true, "COM1": true, "COM2": true, "COM3": true, "COM4": true,
	"COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT0": true, "LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true,
	"LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// CheckFileName validates a file name received from a peer (seeding, LOB
// stores; §17.2.5): a plain name of ASCII letters and digits, _ . $ - and
// spaces, with no path, drive (C:), alternate data stream (a:b), leading or
// trailing dot or space, nor Windows device name (CON, NUL, COM1…).
func CheckFileName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrFileName)
	}
	if len(name) > maxFileNameBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrFileName, len(name), maxFileNameBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '.', c == '$', c == '-', c == ' ':
		case c == '/' || c == '\\':
			return fmt.Errorf("%w: %q contains a path separator", ErrFileName, name)
		case c == ':':
			return fmt.Errorf("%w: %q contains ':' (drive or alternate data stream)", ErrFileName, name)
		default:
			return fmt.Errorf("%w: %q contains the byte 0x%02x (allowed: ASCII letters, digits, _ . $ - and spaces)", ErrFileName, name, c)
		}
	}
	switch first, last := name[0], name[len(name)-1]; {
	case first == '.' || first == ' ':
		return fmt.Errorf("%w: %q starts with a dot or a space", ErrFileName, name)
	case last == '.' || last == ' ':
		return fmt.Errorf("%w: %q ends with a dot or a space", ErrFileName, name)
	}
	base, _, _ := strings.Cut(name, ".")
	if windowsDevices[strings.ToUpper(strings.TrimRight(base, " "))] {
		return fmt.Errorf("%w: %q is a Windows device name", ErrFileName, name)
	}
	return nil
}
