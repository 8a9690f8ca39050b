package sqlserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
)

// The server's identity in its read-only system variables. go-mysql-server
// leaves them at its own defaults (version 8.0.31, version_comment "Dolt",
// port 3306, datadir and hostname empty); tools read them to find the
// server and its files (@@port, @@hostname, @@datadir), so they say what
// this server is.

// Version is the server version Miraj announces: in the protocol's
// handshake, VERSION() and @@version. Clients read the MySQL version it
// starts with (the features they may use); the rest names the server.
const Version = "8.0.40-miraj-1.0.0"

// versionComment is @@version_comment, which the mysql client prints after
// the version when it connects.
const versionComment = "Miraj"

// buildVariables are the variables that describe the program: set once
// in New.
func buildVariables() map[string]any {
	osName, machine := runtime.GOOS, runtime.GOARCH
	if osName == "linux" {
		osName = "Linux" // as MySQL names it
	}
	switch machine {
	case "amd64":
		machine = "x86_64"
	case "arm64":
		machine = "aarch64"
	}
	return map[string]any{
		"version":                 Version,
		"version_comment":         versionComment,
		"version_compile_os":      osName,
		"version_compile_machine": machine,
		"protocol_version":        10,
		// No Unix socket and no pid file: clients connect over TCP.
		"socket":   "",
		"pid_file": "",
	}
}

// announceListener sets the variables that describe this server's place:
// its client port (the one chosen when --port is 0), address, data
// directory and host name. Called by Run once listening.
func (s *Server) announceListener() error {
	_, port, err := net.SplitHostPort(s.listener.Addr().String())
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(s.cfg.Root)
	if err != nil {
		return err
	}
	name, err := os.Hostname()
	if err != nil {
		name = ""
	}
	if err := sql.SystemVariables.AssignValues(map[string]any{
		"port":         p,
		"bind_address": s.cfg.Bind,
		"datadir":      dir + string(filepath.Separator), // MySQL's ends with a separator
		"hostname":     name,
	}); err != nil {
		return fmt.Errorf("system variables of the listener: %w", err)
	}
	return nil
}
