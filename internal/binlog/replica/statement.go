package replica

import (
	"strconv"
	"strings"
	"unicode"
)

// StatementKind is which replica statement a text is.
type StatementKind int

const (
	StmtChange StatementKind = iota + 1 // CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO
	StmtStart                           // START SLAVE / REPLICA
	StmtStop                            // STOP SLAVE / REPLICA
	StmtReset                           // RESET SLAVE / REPLICA [ALL]
	StmtShow                            // SHOW SLAVE / REPLICA STATUS, SHOW ALL SLAVES STATUS
)

// Statement is a parsed replica statement.
type Statement struct {
	Kind StatementKind
	// IO and SQL are the threads START and STOP name; both when the
	// statement names none.
	IO, SQL bool
	// All is RESET SLAVE ALL, or SHOW ALL SLAVES STATUS.
	All bool
	// options of CHANGE MASTER TO, in the order written.
	options []option
}

// option is one NAME = value of CHANGE MASTER TO.
type option struct {
	name  string // upper case, MASTER_ spelling
	text  string // a string's text, a number's digits, a word
	isStr bool
	list  []string // IGNORE_SERVER_IDS = (1, 2)
}

// token is a word, a quoted string, a number or one punctuation byte.
type token struct {
	text  string
	str   bool // a quoted string (text unescaped)
	punct bool
}

// tokenize splits a replica statement. It stops at the first ';' (what
// follows must be blank) and reports a syntax error at an unclosed quote.
func tokenize(q string) ([]token, string, error) {
	var out []token
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return out, "", errSyntax(q[i:])
			}
			i += end + 4
		case c == ';':
			return out, q[i+1:], nil
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(q); j++ {
				if q[j] == '\\' && j+1 < len(q) {
					j++
					switch q[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case '0':
						b.WriteByte(0)
					default:
						b.WriteByte(q[j])
					}
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(q[j])
			}
			if j >= len(q) {
				return out, "", errSyntax(q[i:])
			}
			out = append(out, token{text: b.String(), str: true})
			i = j + 1
		case c == '`':
			end := strings.IndexByte(q[i+1:], '`')
			if end < 0 {
				return out, "", errSyntax(q[i:])
			}
			out = append(out, token{text: q[i+1 : i+1+end]})
			i += end + 2
		case c == '_' || c == '.' || c == '-' || c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))):
			j := i
			for j < len(q) && (q[j] == '_' || q[j] == '.' || q[j] == '-' && j == i || q[j] < 0x80 && (unicode.IsLetter(rune(q[j])) || unicode.IsDigit(rune(q[j])))) {
				j++
			}
			out = append(out, token{text: q[i:j]})
			i = j
		default:
			out = append(out, token{text: q[i : i+1], punct: true})
			i++
		}
	}
	return out, "", nil
}

func isWord(t token, w string) bool { return !t.str && !t.punct && strings.EqualFold(t.text, w) }

// Parse reads q's first statement as a replica statement. ok is false
// when it is not one (another statement: the caller runs it as usual);
// err is set when it is one but malformed or asks for what Miraj does not
// do. end is where the statement ends in q (after its ';').
func Parse(q string) (st Statement, end int, ok bool, err error) {
	if !mayBeOurs(q) {
		return st, 0, false, nil
	}
	toks, rest, terr := tokenize(q)
	if len(toks) < 2 || !ours(toks) {
		return st, 0, false, nil
	}
	if terr != nil {
		return st, len(q), true, terr
	}
	end = len(q) - len(rest)
	st, err = parseTokens(toks)
	return st, end, true, err
}

// mayBeOurs is a cheap look at a statement's first word, before it is
// tokenized (every client statement passes here): false when it cannot
// start a replica statement. A statement that starts with a comment or
// anything but a word is looked at whole.
func mayBeOurs(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	n := 0
	for n < len(q) && (q[n] >= 'a' && q[n] <= 'z' || q[n] >= 'A' && q[n] <= 'Z') {
		n++
	}
	if n == 0 {
		return true
	}
	for _, w := range [...]string{"CHANGE", "START", "STOP", "RESET", "SHOW"} {
		if strings.EqualFold(q[:n], w) {
			return true
		}
	}
	return false
}

// ours reports whether the first words make a replica statement.
func ours(t []token) bool {
	w := func(i int, words ...string) bool {
		if i >= len(t) {
			return false
		}
		for _, x := range words {
			if isWord(t[i], x) {
				return true
			}
		}
		return false
	}
	switch {
	case w(0, "CHANGE") && (w(1, "MASTER") || w(1, "REPLICATION") && w(2, "SOURCE")):
		return true
	case w(0, "START", "STOP", "RESET") && (w(1, "SLAVE", "REPLICA") || w(1, "ALL") && w(2, "SLAVES", "REPLICAS")):
		return true
	case w(0, "SHOW") && (w(1, "SLAVE", "REPLICA") && w(2, "STATUS") || w(1, "ALL") && w(2, "SLAVES", "REPLICAS") && w(3, "STATUS")):
		return true
	}
	return false
}

// connectionName passes the connection name at t[i], if any: only the
// default connection, an empty name, is there.
func connectionName(t []token, i int) (int, error) {
	if i < len(t) && t[i].str {
		if t[i].text != "" {
			return i, errorf(codeNotSupported, "42000", "This version of MySQL doesn't yet support 'named replication connections: Miraj replicates from one source'")
		}
		i++
	}
	return i, nil
}

func errNamedChannel() *Error {
	return errorf(codeNotSupported, "42000", "This version of MySQL doesn't yet support 'named replication channels: Miraj replicates from one source'")
}

func parseTokens(t []token) (st Statement, err error) {
	near := func(i int) *Error {
		var parts []string
		for _, x := range t[i:] {
			parts = append(parts, x.text)
		}
		return errSyntax(strings.Join(parts, " "))
	}
	first := strings.ToUpper(t[0].text)
	i := 1
	switch first {
	case "SHOW":
		st.Kind = StmtShow
		if isWord(t[1], "ALL") {
			st.All = true
			i = 4
		} else {
			if i = 3; i < len(t) && isWord(t[2], "STATUS") && (isWord(t[i], "FOR") || isWord(t[i], "CHANNEL")) {
				return st, errNamedChannel()
			}
		}
		if i < len(t) {
			return st, near(i)
		}
		return st, nil
	case "CHANGE":
		st.Kind = StmtChange
		if isWord(t[1], "REPLICATION") {
			i = 3
		} else {
			i = 2
		}
		if i, err = connectionName(t, i); err != nil {
			return st, err
		}
		if i >= len(t) || !isWord(t[i], "TO") {
			return st, near(min(i, len(t)-1))
		}
		i++
		for {
			if i >= len(t) {
				return st, near(len(t) - 1)
			}
			o, next, err := parseOption(t, i)
			if err != nil {
				return st, err
			}
			st.options = append(st.options, o)
			i = next
			if i == len(t) {
				break
			}
			if !(t[i].punct && t[i].text == ",") {
				return st, near(i)
			}
			i++
		}
		if i < len(t) && isWord(t[i], "FOR") {
			return st, errNamedChannel()
		}
		return st, nil
	}
	switch first {
	case "START":
		st.Kind = StmtStart
	case "STOP":
		st.Kind = StmtStop
	case "RESET":
		st.Kind = StmtReset
	}
	if isWord(t[1], "ALL") {
		if st.Kind == StmtReset {
			return st, near(1)
		}
		st.All = true
		i = 3
	} else {
		i = 2
	}
	if i, err = connectionName(t, i); err != nil {
		return st, err
	}
	switch st.Kind {
	case StmtReset:
		if i < len(t) && isWord(t[i], "ALL") {
			st.All = true
			i++
		}
	case StmtStart, StmtStop:
		for i < len(t) && !st.All {
			switch {
			case isWord(t[i], "IO_THREAD"):
				st.IO = true
			case isWord(t[i], "SQL_THREAD"):
				st.SQL = true
			default:
				if st.Kind == StmtStart && isWord(t[i], "UNTIL") {
					return st, errorf(codeNotSupported, "42000", "This version of MySQL doesn't yet support 'START SLAVE … UNTIL'")
				}
				return st, near(i)
			}
			i++
			if i < len(t) && t[i].punct && t[i].text == "," {
				i++
				if i == len(t) {
					return st, near(i - 1)
				}
			}
		}
	}
	if i < len(t) {
		if isWord(t[i], "FOR") {
			return st, errNamedChannel()
		}
		return st, near(i)
	}
	if !st.IO && !st.SQL {
		st.IO, st.SQL = true, true
	}
	return st, nil
}

// parseOption reads NAME = value at t[i], returning the index after it.
func parseOption(t []token, i int) (option, int, error) {
	if t[i].str || t[i].punct {
		return option{}, 0, errSyntax(t[i].text)
	}
	name := strings.ToUpper(t[i].text)
	if strings.HasPrefix(name, "SOURCE_") {
		name = "MASTER_" + strings.TrimPrefix(name, "SOURCE_")
	}
	o := option{name: name}
	i++
	if i >= len(t) || !(t[i].punct && t[i].text == "=") {
		return o, 0, errSyntax(name)
	}
	i++
	if i >= len(t) {
		return o, 0, errSyntax(name + " =")
	}
	if t[i].punct && t[i].text == "(" {
		o.list = []string{}
		i++
		for i < len(t) && !(t[i].punct && t[i].text == ")") {
			if t[i].punct && t[i].text == "," {
				i++
				continue
			}
			o.list = append(o.list, t[i].text)
			i++
		}
		if i >= len(t) {
			return o, 0, errSyntax(name)
		}
		return o, i + 1, nil
	}
	if t[i].punct {
		return o, 0, errSyntax(t[i].text)
	}
	o.text, o.isStr = t[i].text, t[i].str
	return o, i + 1, nil
}

// keptOptions are the reference's options CHANGE MASTER accepts and
// keeps with no effect (§17.13.4): each draws a warning.
var keptOptions = map[string]bool{
	"MASTER_DELAY": true, "IGNORE_SERVER_IDS": true, "DO_DOMAIN_IDS": true, "IGNORE_DOMAIN_IDS": true,
	"MASTER_SSL_CAPATH": true, "MASTER_SSL_CIPHER": true, "MASTER_SSL_CRL": true, "MASTER_SSL_CRLPATH": true,
	"MASTER_BIND": true, "MASTER_RETRY_COUNT": true, "RELAY_LOG_FILE": true, "RELAY_LOG_POS": true,
	"MASTER_DEMOTE_TO_SLAVE": true,
}

// maxHeartbeatPeriod is MariaDB's bound on MASTER_HEARTBEAT_PERIOD, seconds.
const maxHeartbeatPeriod = 4294967

// maxConnectRetry is MariaDB's bound on MASTER_CONNECT_RETRY (a year).
const maxConnectRetry = 31536000

// applyOptions returns c changed by st's options, and the warnings of the
// options kept with no effect.
func applyOptions(c Config, opts []option) (Config, []string, error) {
	var warnings []string
	seen := map[string]bool{}
	posGiven, gtidGiven := false, false
	str := func(o option) (string, error) {
		if !o.isStr {
			return "", errSyntax(o.text)
		}
		return o.text, nil
	}
	num := func(o option, max uint64) (uint64, error) {
		if o.isStr || o.list != nil {
			return 0, errSyntax(o.text)
		}
		n, err := strconv.ParseUint(o.text, 10, 64)
		if err != nil || n > max {
			return 0, errorf(codeWrongArguments, "HY000", "Incorrect arguments to %s", o.name)
		}
		return n, nil
	}
	flag := func(o option) (bool, error) {
		n, err := num(o, 1)
		return n == 1, err
	}
	for _, o := range opts {
		if seen[o.name] {
			return c, nil, errorf(codeWrongArguments, "HY000", "Incorrect arguments to CHANGE MASTER: %s is given twice", o.name)
		}
		seen[o.name] = true
		var err error
		switch o.name {
		case "MASTER_HOST":
			c.Host, err = str(o)
			if err == nil && c.Host == "" {
				err = errorf(codeWrongArguments, "HY000", "Incorrect arguments to MASTER_HOST")
			}
		case "MASTER_USER":
			c.User, err = str(o)
		case "MASTER_PASSWORD":
			c.Password, err = str(o)
		case "MASTER_PORT":
			var n uint64
			n, err = num(o, 65535)
			c.Port = int(n)
		case "MASTER_CONNECT_RETRY":
			var n uint64
			n, err = num(o, maxConnectRetry)
			if n == 0 {
				n = 1
			}
			c.ConnectRetry = int(n)
		case "MASTER_HEARTBEAT_PERIOD":
			if o.isStr {
				err = errSyntax(o.text)
				break
			}
			f, perr := strconv.ParseFloat(o.text, 64)
			if perr != nil || f < 0 || f > maxHeartbeatPeriod {
				err = errorf(codeHeartbeatRange, "HY000", "The requested value for the heartbeat period is either negative or exceeds the maximum allowed (%d seconds).", maxHeartbeatPeriod)
			}
			c.HeartbeatPeriod = f
		case "MASTER_USE_GTID":
			gtidGiven = true
			switch v := useGTID(strings.ToLower(o.text)); v {
			case useSlavePos, useCurrentPos, useNo:
				c.UseGTID = v
			default:
				err = errSyntax(o.text)
			}
		case "MASTER_LOG_FILE":
			posGiven = true
			c.LogFile, err = str(o)
		case "MASTER_LOG_POS":
			posGiven = true
			c.LogPos, err = num(o, 1<<63)
		case "MASTER_SSL":
			c.SSL, err = flag(o)
		case "MASTER_SSL_CA":
			c.SSLCA, err = str(o)
		case "MASTER_SSL_CERT":
			c.SSLCert, err = str(o)
		case "MASTER_SSL_KEY":
			c.SSLKey, err = str(o)
		case "MASTER_SSL_VERIFY_SERVER_CERT":
			c.SSLVerify, err = flag(o)
		default:
			if !keptOptions[o.name] {
				return c, nil, errSyntax(o.name)
			}
			if c.Kept == nil {
				c.Kept = map[string]string{}
			}
			v := o.text
			if o.list != nil {
				v = "(" + strings.Join(o.list, ",") + ")"
			}
			c.Kept[o.name] = v
			warnings = append(warnings, o.name+" is kept with no effect: Miraj's replica does not "+keptWhat(o.name))
		}
		if err != nil {
			return c, nil, err
		}
	}
	switch {
	case posGiven && gtidGiven && c.UseGTID != useNo:
		return c, nil, errorf(codeWrongArguments, "HY000", "Incorrect arguments to CHANGE MASTER: MASTER_LOG_FILE / MASTER_LOG_POS need MASTER_USE_GTID = no")
	case posGiven:
		c.UseGTID = useNo
		if c.LogPos < 4 {
			c.LogPos = 4
		}
	}
	if seen["MASTER_HOST"] && !posGiven && !gtidGiven {
		// A new source: MariaDB starts it from the GTID position.
		c.UseGTID = useSlavePos
	}
	return c, warnings, nil
}

func keptWhat(name string) string {
	switch name {
	case "MASTER_DELAY":
		return "delay what it applies"
	case "IGNORE_SERVER_IDS", "DO_DOMAIN_IDS", "IGNORE_DOMAIN_IDS":
		return "filter what it receives"
	case "RELAY_LOG_FILE", "RELAY_LOG_POS":
		return "keep a relay log (its queue is in memory)"
	}
	return "use this option"
}
