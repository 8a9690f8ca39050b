package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/atomicfile"
)

// ConfigFile is the name of the replica's configuration in the server's
// state folder. It holds the source's password: it is written 0600.
const ConfigFile = "replica-source.json"

// useGTID is MASTER_USE_GTID.
type useGTID string

const (
	useSlavePos   useGTID = "slave_pos"
	useCurrentPos useGTID = "current_pos"
	useNo         useGTID = "no"
)

// Config is what CHANGE MASTER TO sets, as saved in replica-source.json.
type Config struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	User     string `json:"user"`
	Password string `json:"password"`
	// UseGTID is slave_pos, current_pos or no (LogFile and LogPos say
	// where to start). current_pos starts from gtid_slave_pos merged,
	// per domain, with the newer GTIDs this server wrote to its own binary
	// log (CurrentPos), as MariaDB's does.
	UseGTID useGTID `json:"use_gtid"`
	LogFile string  `json:"log_file,omitempty"`
	LogPos  uint64  `json:"log_pos,omitempty"`
	// ConnectRetry is the time between connection attempts, in seconds.
	ConnectRetry int `json:"connect_retry"`
	// HeartbeatPeriod asks the source for a heartbeat after this much
	// silence, in seconds (0: none).
	HeartbeatPeriod float64 `json:"heartbeat_period"`
	SSL             bool    `json:"ssl,omitempty"`
	SSLCA           string  `json:"ssl_ca,omitempty"`
	SSLCert         string  `json:"ssl_cert,omitempty"`
	SSLKey          string  `json:"ssl_key,omitempty"`
	SSLVerify       bool    `json:"ssl_verify_server_cert,omitempty"`
	// Kept are the reference's options accepted with no effect
	// (MASTER_DELAY, IGNORE_SERVER_IDS, DO_DOMAIN_IDS…), by name, as
	// written.
	Kept map[string]string `json:"kept,omitempty"`
	// IORunning and SQLRunning say which threads ran when the server
	// stopped: they start again at the next start.
	IORunning  bool `json:"io_running"`
	SQLRunning bool `json:"sql_running"`
}

// defaultConnectRetry is MariaDB's MASTER_CONNECT_RETRY default, seconds.
const defaultConnectRetry = 60

// defaultHeartbeatPeriod is MariaDB's default: half of slave_net_timeout
// (60 s).
const defaultHeartbeatPeriod = 30

func defaultConfig() Config {
	return Config{Port: 3306, UseGTID: useSlavePos, ConnectRetry: defaultConnectRetry, HeartbeatPeriod: defaultHeartbeatPeriod}
}

// configured reports whether CHANGE MASTER TO named a source.
func (c *Config) configured() bool { return c.Host != "" }

// loadConfig reads dir/replica-source.json; a missing file is no
// configuration (ok false).
func loadConfig(dir string) (Config, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return defaultConfig(), false, nil
	}
	if err != nil {
		return Config{}, false, fmt.Errorf("replica: read %s: %w", ConfigFile, err)
	}
	c := defaultConfig()
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, false, fmt.Errorf("replica: %s: %w", ConfigFile, err)
	}
	return c, c.configured(), nil
}

// saveConfig writes c to dir/replica-source.json, readable by the server's
// user alone (it holds a password).
func saveConfig(dir string, c Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, ConfigFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("replica: write %s: %w", ConfigFile, err)
	}
	return nil
}

// removeConfig erases the configuration (RESET SLAVE ALL).
func removeConfig(dir string) error {
	err := os.Remove(filepath.Join(dir, ConfigFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replica: remove %s: %w", ConfigFile, err)
	}
	return nil
}
