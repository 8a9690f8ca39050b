package clienttls

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/pki"
)

// The files of the self-signed pair in the server's state folder, named as
// MySQL 8 names those of auto_generate_certs.
const (
	AutoCAFile   = "ca.pem"
	AutoCAKey    = "ca-key.pem"
	AutoCertFile = "server-cert.pem"
	AutoKeyFile  = "server-key.pem"
)

// AutoNames are the common names of the self-signed pair.
type AutoNames struct{ CA, Server string }

// NamesFor names the pair after the server's version, as MySQL's
// MySQL_Server_8.0.40_Auto_Generated_CA_Certificate.
func NamesFor(version string) AutoNames {
	return AutoNames{CA: "Miraj_Server_" + version + "_Auto_Generated_CA_Certificate",
		Server: "Miraj_Server_" + version + "_Auto_Generated_Server_Certificate"}
}

// Auto returns the files of the self-signed pair in dir, making them when
// the server certificate is not there (the last file written: a start-up
// cut short while making them makes them again). made reports whether they
// were made now. hosts are the server certificate's subject alternative
// names. What is found is not checked here: Load does that.
func Auto(dir string, names AutoNames, hosts []string) (files Files, made bool, err error) {
	files = Files{Cert: filepath.Join(dir, AutoCertFile), Key: filepath.Join(dir, AutoKeyFile), CA: filepath.Join(dir, AutoCAFile)}
	switch _, err := os.Stat(files.Cert); {
	case err == nil:
		return files, false, nil
	case !errors.Is(err, os.ErrNotExist):
		return files, false, &FileError{Option: "--ssl-cert", Var: "ssl_cert", Path: files.Cert, Err: unwrapPath(err)}
	}
	if err := pki.NewServerPair(pki.ServerPairOptions{Dir: dir, CAFile: AutoCAFile, CAKeyFile: AutoCAKey,
		CertFile: AutoCertFile, KeyFile: AutoKeyFile, CAName: names.CA, ServerName: names.Server,
		Hosts: hosts, Force: true}); err != nil {
		return files, false, fmt.Errorf("making the self-signed certificates in %s: %w", dir, err)
	}
	return files, true, nil
}
